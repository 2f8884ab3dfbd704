// Owns printing kernel IR as CUDA C++: a small C-like printer (index arithmetic, values,
// statements) plus the CUDA layer (types, conversions, the op table's templates, kernel
// signatures). A kernel file is the common preamble followed by the kernel.
#pragma once

#include <string>

#include "codegen/kir/kir.h"

namespace fuserc::cuda {

// The preamble every kernel file starts with: includes, fz_vec, the fz_* helpers and the
// Philox code of core/base/philox_impl.h.
const std::string& preamble();

// The name a combo kernel's member function gives its block index (codegen/lower/combo_kernel.h).
inline constexpr const char* kBlockParam = "fz_block";

// A combo kernel's member as a device function `name` of its parameters and its block index
// (kBlockParam, read where a kernel reads blockIdx.x), its parameters and locals named n0_,
// n1_, ... in order: members that differ only in names print the same text.
std::string member_function(const kir::Kernel& kernel, const std::string& name);

// The kernel alone (no preamble), after the device functions it calls (kir::Kernel::callees).
std::string emit_kernel(const kir::Kernel& kernel);

// A complete translation unit: preamble + kernel.
std::string emit_source(const kir::Kernel& kernel);

// C spelling of a kernel type ("float", "__nv_bfloat16", "long long", ...).
const char* c_type(kir::Type t);
// The exact C++ type of a kernel parameter, as in the signature.
std::string param_c_type(const kir::Param& p);

}  // namespace fuserc::cuda
