// Owns what every scheduler's lowering shares: substituting coordinate variables, the extent
// an access can reach, the one-line listing of a segment's ops, and the kernel's parameters
// (tensors read, scalars, tensors written, then the symbols its index arithmetic uses) with
// their KernelArgs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/kernel_summary.h"
#include "codegen/kir/kir.h"
#include "core/ir/fusion.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc::lower {

class NameTable;

// `e` with the named variables replaced.
Expr subst(const Expr& e, const std::map<std::string, Expr>& m);

// The number of elements an access to `v` can reach: numel, or with strides the largest
// offset plus one.
Expr addressable_extent(const Value& v);

// The element offset at which output `o` is written for its coordinates `coords`: through the
// strides of the input it is written into in place when that input declares strides, else
// `linear` (its row-major index, which the caller knows).
Expr output_offset(const Fusion& f, ValueId o, const std::vector<Expr>& coords, const Expr& linear);

// "y = add(a, b); z = exp(y)".
std::string op_listing(const Fusion& f, const Segment& s);

// `body` guarded by `cond` (inline when it always holds, nothing when it never does).
void append_guarded(kir::Block& out, const Expr& cond, kir::Block body);

// An index condition as a kernel value (a literal when it is constant).
kir::ValuePtr condition_value(const Expr& cond);

// Fresh parameter names for the segment's inputs and outputs (symbols' names are reserved).
std::map<ValueId, std::string> name_segment_params(const Fusion& f, const Segment& s,
                                                   NameTable& names);

// Appends the tensor and scalar parameters of the segment, in the order the runtime binds them;
// an output written in place and its input are not __restrict__. An output written in place
// through strides that may make elements share memory gets a guard saying so.
void add_tensor_params(const Fusion& f, const Segment& s,
                       const std::map<ValueId, std::string>& param_name, kir::Kernel& k,
                       KernelSummary& ks);

// Appends a parameter pointing to per-launch scratch memory of `bytes` (zero-filled before the
// launch when `zero_init`), holding elements of `element`, and its allocation.
void add_scratch_param(const std::string& name, kir::Type element, const Expr& bytes,
                       bool zero_init, kir::Kernel& k, KernelSummary& ks);

// Appends one scalar parameter per symbol and per size literal ({"size": E}, a `long long`
// the size program computes) the kernel body uses (call last).
void add_symbol_params(const Fusion& f, kir::Kernel& k, KernelSummary& ks);
// A `long long` parameter `name` carrying `value` from the size program (KernelArg::Role::Size).
void add_size_param(const std::string& name, const Expr& value, kir::Kernel& k,
                    KernelSummary& ks);

}  // namespace fuserc::lower
