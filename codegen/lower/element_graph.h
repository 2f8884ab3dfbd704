// Owns the element graph: the value of any fusion value at given coordinates, expressed as a
// graph of element computations whose leaves are loads from global memory at an offset (an
// Expr over the coordinates), scalar parameters, literals, iota and random draws. Index
// propagation (core/ir/element_access.h) turns view ops into index arithmetic; pad and cat
// become conditions on the coordinates. No buffer is ever needed for a view. A value read at
// the same coordinates twice is one node; the graph is built without recursion, so its depth
// is bounded by memory alone. Node ids are topological: operands before their users.
// index_select and gather become an Index node (the clamped index element, a local of the
// kernel) and reads of their input at coordinates that use its index variable: an indirect
// load inside the element computation, wherever the index comes from.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ir/element_access.h"
#include "core/ir/fusion.h"

namespace fuserc::lower {

struct ENode {
  enum class Kind : uint8_t {
    Load,     // input `value` at element `offset`
    Scalar,   // the scalar input `value` (a kernel parameter)
    Literal,  // `literal`
    Op,       // elementwise `op` of args (each already of the computation's compute type)
    Convert,  // args[0] converted to `dtype` (cast semantics)
    Cond,     // every `predicate` holds ? args[0] : args[1]  (evaluated lazily)
    Iota,     // start + step * index
    Rand,     // `op` (Rand or Randn) of seed args[0] and offset args[1] at linear `index`
    Reduced,  // result `output` of reduction `reduction` for the current row
    Index,    // args[0] (an element of an index tensor) clamped into [0, `offset`): the value of
              // the index variable `index` that the coordinates of indexed reads use
  };
  Kind kind = Kind::Literal;
  DType dtype = DType::F32;        // the dtype of the result
  ValueId value = kNoValue;        // Load/Scalar: the input; otherwise the fusion value it computes
  Expr offset;                     // Load; Index: the extent of the indexed dimension
  std::vector<Expr> in_bounds;     // Load: conditions (not always true) that its coords are inside
  fuserc::Literal literal;         // Literal
  OpKind op = OpKind::Add;         // Op, Rand
  DType computation = DType::F32;  // Op: the dtype its operands are combined in
  std::vector<int> args;
  std::vector<Expr> predicate;     // Cond
  Expr index;                      // Iota, Rand; Index: its index variable
  std::vector<int> deps;           // Index nodes whose variables this node's expressions use
  fuserc::Literal start, step;     // Iota
  int reduction = -1, output = 0;  // Reduced
};

class ElementGraph {
 public:
  // `memory_values` are the values read from global memory (the segment's inputs).
  ElementGraph(const Fusion& f, const std::vector<ValueId>& memory_values);

  // The node computing value `v` at `coords` (one Expr per dimension of v).
  int value_at(ValueId v, const std::vector<Expr>& coords);

  // Declares `v` as result `output` of reduction `reduction` of a reduction kernel: it is read
  // only at `row_coords` (the current row), where it is a Reduced node.
  void set_reduced(ValueId v, int reduction, int output, std::vector<Expr> row_coords);

  const ENode& node(int id) const { return nodes_[id]; }
  const std::vector<ENode>& nodes() const { return nodes_; }

  // The nodes computing `roots` reaches without entering a branch of a condition (pad, cat):
  // those every element computes, whose loads may be hoisted, vectorized or cached.
  std::set<int> unconditional_nodes(const std::vector<int>& roots) const;

  // Index nodes whose variables `e` uses, directly or through other Index nodes' reads (the
  // coordinates their index elements are read at): what an access at `e` depends on.
  std::vector<int> index_sources(const Expr& e) const;
  // The coordinates (over the graph's coordinate variables) of the index elements that the
  // Index nodes `e` uses read, transitively: an access at `e` varies only where these do.
  std::vector<Expr> index_coordinates(const Expr& e) const;

  // Element offset of `coords` in a value read from memory (its strides, or contiguous).
  Expr memory_offset(ValueId v, const std::vector<Expr>& coords) const;

 private:
  const Fusion& f_;
  std::vector<bool> in_memory_;
  struct ReducedValue {
    int reduction, output;
    std::vector<Expr> row_coords;
  };
  std::map<ValueId, ReducedValue> reduced_;
  std::vector<ENode> nodes_;
  struct KeyHash {
    size_t operator()(const std::pair<ValueId, std::vector<Expr>>& k) const;
  };
  std::unordered_map<std::pair<ValueId, std::vector<Expr>>, int, KeyHash> memo_;

  using Key = std::pair<ValueId, std::vector<Expr>>;
  struct IndexKeyLess {
    bool operator()(const std::pair<int, Expr>& a, const std::pair<int, Expr>& b) const {
      return a.first != b.first ? a.first < b.first : compare(a.second, b.second) < 0;
    }
  };
  std::map<std::string, int> index_nodes_;  // index variable name -> Index node
  std::map<int, Expr> index_read_at_;       // Index node -> linearized coords of its element
  std::map<std::pair<int, Expr>, int, IndexKeyLess> index_memo_;  // (element, extent) -> Index
  int add(ENode n);
  // The Index node of index element node `element` clamped to `extent` (read at `read_at`).
  int index_node(int element, const Expr& extent, const Expr& read_at);
  int find(const Key& key) const;  // the memoized node, or -1
  // A node computed from nothing else in the graph (memory, reduction results, creation), or
  // -1 when `v` has operands to compute first.
  int leaf(ValueId v, const std::vector<Expr>& coords);
  // `v` (defined by an op with operands) at `coords`, given its operands' nodes (-1: literal).
  int build(ValueId v, const std::vector<Expr>& coords, const std::vector<int>& arg_nodes);
  int promote(int node, DType computation);            // operand in the computation's compute type
  int literal(const fuserc::Literal& l, DType dtype);  // an element of `dtype`
  int operand_literal(const fuserc::Literal& l, DType computation);  // in the compute type
  int elementwise(const Op& op, const Value& out, const std::vector<int>& arg_nodes);
  int view(const Op& op, const Value& out, const std::vector<Expr>& coords,
           const std::vector<int>& arg_nodes);
};

// The dtype whose kernel type a dtype is computed in (f16/bf16 -> f32; others unchanged).
DType canonical_dtype(DType d);

}  // namespace fuserc::lower
