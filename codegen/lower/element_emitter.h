// Owns turning element-graph nodes into kernel-IR statements: each needed node becomes one
// named local (literals stay inline), conditions (pad, cat) become if/else so that loads in a
// branch not taken never run, and on the vector path everything that does not depend on the
// lane is computed once before the lane loop, and contiguous loads become lanes of one vector
// load.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/kir/kir.h"
#include "codegen/lower/element_graph.h"

namespace fuserc::lower {

// Unique C identifiers for locals and parameters.
class NameTable {
 public:
  NameTable();  // C/C++ keywords and CUDA builtins are reserved
  void reserve(const std::string& name) { taken_.insert(name); }
  bool taken(const std::string& name) const { return taken_.count(name) > 0; }
  // `base` if free, else base_v, base_v2, ... (and reserves the result).
  std::string fresh(const std::string& base);

 private:
  std::set<std::string> taken_;
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

  // Nodes emitted while a scope is open are visible until it is closed. The element code of
  // one path opens a scope for its block (on the vector path, for the lane loop's body).
  void begin_scope(kir::Block& block) { scopes_.push_back({&block, {}}); }
  void end_scope() { scopes_.pop_back(); }

  // Values to use for nodes instead of computing them (reduction results, cached loads).
  void set_override(int node, kir::ValuePtr value) { overrides_[node] = std::move(value); }

  // Emits `node` (and what it needs) into `block` (the block of the innermost scope, or a
  // branch being built); returns the value to use.
  kir::ValuePtr emit(int node, kir::Block& block);

  // The offset of a load node on this path.
  Expr offset_of(int node) const { return coords_(graph_.node(node).offset); }
  bool depends_on_lane(int node);

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
  std::map<int, bool> lane_dependent_;
  std::map<int, kir::ValuePtr> overrides_;

  // Emitted nodes per open scope; scope 0 is the hoisting target when there is one.
  struct Scope {
    kir::Block* block;
    std::map<int, kir::ValuePtr> values;
  };
  std::vector<Scope> scopes_;

  kir::ValuePtr lookup(int node) const;
  kir::ValuePtr compute(int node, kir::Block& block);
  kir::ValuePtr emit_cond(int node, kir::Block& block);
  std::string local_name(int node);
  bool uses_lane(const Expr& e) const;
};

}  // namespace fuserc::lower
