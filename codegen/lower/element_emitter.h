// Owns turning element-graph nodes into kernel-IR statements: each needed node becomes one
// named local (literals stay inline), computed once, in the innermost branch of the conditions
// (pad, cat: if/else, so that loads in a branch not taken never run) that holds all its uses;
// on the vector path everything that does not depend on the lane is computed once before the
// lane loop, and contiguous loads become lanes of one vector load. In loops over consecutive
// elements, random draws fill one Philox block per group of elements (4 for rand, 2 for rand
// f64 and randn) instead of one per element. An Index node (index_select, gather) becomes a
// local holding the clamped index; the addresses that use it read that local.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/kir/kir.h"
#include "codegen/lower/element_graph.h"

namespace fuserc::lower {

// Whether `name`, written as an identifier in a kernel, could mean something else there: a C++
// keyword, a CUDA built-in, a math function (double or float form) or a type of the headers a
// kernel includes, or a macro of those headers or of the C library the emulator compiles
// against (every all-caps name of two or more characters, such as NULL, INFINITY or M_PI;
// stdin, stdout, stderr, errno, math_errhandling; names starting with cuda or nv_).
bool clashes_with_c(const std::string& name);

// How graph symbol `name` is spelled in a kernel: itself, or fz_sym_<name> where that clashes
// (see clashes_with_c) or takes fuserc's own prefixes (fz_, fuserc_, __).
std::string symbol_spelling(const std::string& name);

// Unique C identifiers for locals and parameters.
class NameTable {
 public:
  NameTable();  // C/C++ keywords and CUDA builtins are reserved
  void reserve(const std::string& name) { taken_.insert(name); }
  bool taken(const std::string& name) const { return taken_.count(name) > 0 || clashes_with_c(name); }
  // `base` if free, else base_v, base_v2, ... (and reserves the result).
  std::string fresh(const std::string& base);

 private:
  std::set<std::string> taken_;
  // Per base that was taken, the last suffix number tried: names are never released, so the
  // suffixes below it are still taken (without it, the n-th fresh name of one base tried n).
  std::map<std::string, int> last_suffix_;
};

class ElementEmitter {
 public:
  // `coords` maps the graph's coordinate index variables to this path's expressions.
  // `param_of` names the kernel parameter of a value read from memory.
  ElementEmitter(const Fusion& f, const ElementGraph& g, NameTable& names,
                 std::function<Expr(const Expr&)> coords,
                 std::function<std::string(ValueId)> param_of, kir::Type index_type);

  // Vector path: `lane` is the lane variable (an index variable); nodes that do not depend on
  // it go to `hoist_to` (the block before the lane loop); loads in `vector_loads` (node id ->
  // vector local) read lanes of that local.
  void set_lane(const Expr& lane, kir::Block* hoist_to, std::map<int, std::string> vector_loads);
  // Vector path (after set_lane): the indirect load `node` (its address uses an Index node's
  // variable, e.g. an embedding row) reads lanes of vector local `vec`, whose `width`-element
  // load at `offset` (its lane 0, over the graph's index variables) goes to the hoisting block
  // once the index locals it needs are there.
  void set_indirect_vector_load(int node, const std::string& vec, const Expr& offset, int width);

  // A loop over consecutive elements: `step` (an index variable) advances by one per
  // iteration and moves the element by one, `first` holds on the loop's first iteration, and
  // `before_loop` receives what lives across iterations. An unconditional random draw whose
  // element index advances with `step` then computes its Philox block only when the element
  // starts a group (or on the first iteration) and reads the other elements of the group from
  // it: a quarter of the work for rand. With `aligned_width` > 0 (an unrolled loop of that
  // many iterations) a draw whose group divides it starts groups where `step` is a multiple of
  // the group, a constant after unrolling; the caller must then guard the path with
  // sequence_conditions() (the first element starts a group).
  void set_sequence(const Expr& step, const Expr& first, kir::Block* before_loop,
                    int aligned_width = 0);
  const std::vector<Expr>& sequence_conditions() const { return sequence_conditions_; }

  // Values to use for nodes instead of computing them (reduction results, cached loads).
  void set_override(int node, kir::ValuePtr value) { overrides_[node] = std::move(value); }
  // The division `node` computed as its dividend times `reciprocal` (the divisor's reciprocal,
  // computed once per row by the caller, which decides where that is exact enough).
  void set_reciprocal(int node, kir::ValuePtr reciprocal) {
    reciprocals_[node] = std::move(reciprocal);
  }

  // Emits the nodes `roots` need into `block` (lane-invariant ones into the hoisting block,
  // when there is one) and returns the roots' values. Each node is computed once, in the
  // innermost branch that contains all its uses; nested conditions deeper than
  // kMaxBranchDepth become selects. A load that runs where its value may not be needed reads
  // only when its coordinates are inside the tensor (else 0). No recursion: code size and
  // emission time are linear in the number of nodes.
  std::vector<kir::ValuePtr> emit(const std::vector<int>& roots, kir::Block& block);

  static constexpr int kMaxBranchDepth = 8;

 private:
  const Fusion& f_;
  const ElementGraph& graph_;
  NameTable& names_;
  std::function<Expr(const Expr&)> coords_;
  std::function<std::string(ValueId)> param_of_;
  kir::Type index_type_;

  Expr lane_;
  kir::Block* hoist_to_ = nullptr;
  std::map<int, std::string> vector_loads_;
  struct IndirectVector {
    std::string vec;
    Expr offset;
    int width = 1;
  };
  std::map<int, IndirectVector> indirect_;
  std::map<int, kir::ValuePtr> overrides_;
  std::map<int, kir::ValuePtr> reciprocals_;

  Expr step_, first_;
  kir::Block* before_loop_ = nullptr;
  int aligned_width_ = 0;
  std::vector<Expr> sequence_conditions_;

  // Index variables of the graph (Index nodes) -> the locals holding their values here.
  std::map<std::string, Expr> index_locals_;

  Expr at(const Expr& e) const;  // an expression of the graph on this path
  bool uses_lane(const Expr& e) const;
  std::string local_name(int node);
  kir::ValuePtr compute(int node, const std::vector<kir::ValuePtr>& args);
  // A random draw that shares its Philox block with the next elements of the sequence, or
  // nothing (then it is computed per element). Emits the block's refill into `target`.
  kir::ValuePtr grouped_rand(int node, const std::vector<kir::ValuePtr>& args, kir::Block& target);
};

}  // namespace fuserc::lower
