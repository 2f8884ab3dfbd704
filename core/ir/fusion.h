// Owns the Fusion IR: a validated, fully typed and shaped graph of values and ops, as the
// front end builds it from the JSON contract. Values are numbered; every value has a dtype
// and a symbolic shape (one Expr per dimension; rank 0 is an empty shape). Ops refer to
// values by number and keep their attributes normalized (negative dims resolved, slice bounds
// clamped, reshape's -1 inferred), so no later stage re-interprets the JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/dtype.h"
#include "core/expr/expr.h"
#include "core/ir/op_table.h"

namespace fuserc {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

// A number written in the graph: `0.5`, `-1`, `true`.
struct Literal {
  enum class Kind : uint8_t { Bool, Int, Float };
  Kind kind = Kind::Int;
  bool b = false;
  int64_t i = 0;
  double f = 0;

  static Literal of_bool(bool v);
  static Literal of_int(int64_t v);
  static Literal of_float(double v);
  // The dtype a literal stands for in type promotion: bool, i64 or f32.
  DType dtype() const;
  double as_double() const;
  int64_t as_int() const;  // floats truncate toward zero, saturating
  bool as_bool() const;
  std::string str() const;  // as written in JSON ("0.5", "-1", "true")
  bool operator==(const Literal& o) const;
};

struct Operand {
  ValueId value = kNoValue;  // a value of the fusion, or kNoValue for a literal
  Literal literal;
  bool is_literal() const { return value == kNoValue; }
};

struct SymbolDecl {
  std::string name;
  int64_t hint = 0;
  int64_t min = 1;
  int64_t max = 0;
  Expr expr;             // Expr::symbol(name, min, max)
  bool declared = true;  // false when it only appeared in a shape
};

struct Value {
  std::string name;
  DType dtype = DType::F32;
  std::vector<Expr> shape;                         // empty: rank 0
  std::vector<Expr> strides;                       // inputs only; empty: contiguous row-major
  int def_op = -1;                                 // index into Fusion::ops; -1 for graph inputs
  int input_index = -1;                            // index into Fusion::inputs; -1 for op results
  bool scalar_input = false;                       // a graph input declared without "shape"
  std::optional<std::pair<double, double>> range;  // inputs: the values taken in practice

  int rank() const { return static_cast<int>(shape.size()); }
  bool is_input() const { return input_index >= 0; }
  Expr numel() const { return product(shape); }
};

enum class GeluApproximate : uint8_t { None, Tanh };

// Attributes of every op kind, normalized. Only the fields of the op's kind are meaningful.
struct OpAttrs {
  std::vector<int64_t> dims;  // reduce dims (sorted), permute order, squeeze dims (sorted)
  bool keepdim = false;
  std::optional<DType> dtype;  // cast, sum/mean, full, iota, rand/randn
  int64_t correction = 1;      // var, var_mean
  std::vector<Expr> shape;     // broadcast_in_dim, expand, reshape, full, rand/randn: result shape
  std::vector<int64_t> broadcast_dims;
  std::vector<Expr> starts;    // slice: >= 0 (negative starts resolved and clamped); a start
                               // past the extent means an empty slice
  std::vector<Expr> ends;      // slice: clamped to [start, extent]
  std::vector<int64_t> steps;  // slice: positive
  std::vector<std::pair<int64_t, int64_t>> pads;  // pad: (lo, hi) per dim, negative crops
  Literal value;                                  // pad fill, full value
  int64_t dim = 0;                                // unsqueeze, cat: normalized
  Expr length;                                    // iota
  Literal start, step;                            // iota
};

struct Op {
  OpKind kind = OpKind::Add;
  std::vector<Operand> args;
  std::vector<ValueId> outs;
  OpAttrs attrs;
  int source_index = -1;  // index in the JSON "ops" array; -1 for ops made by passes

  const OpInfo& info() const { return op_info(kind); }
};

class Fusion {
 public:
  std::string name;
  std::string source_file;
  std::vector<SymbolDecl> symbols;  // sorted by name
  std::vector<Value> values;
  std::vector<ValueId> inputs;
  std::vector<Op> ops;  // in dependency order
  std::vector<ValueId> outputs;
  std::vector<std::pair<ValueId, ValueId>> aliases;  // (output value, input value written in place)

  const Value& value(ValueId id) const;
  Value& value(ValueId id);
  // By name, in constant time (an index kept as values are appended; a value's name must not
  // change once it is in `values`).
  std::optional<ValueId> find_value(const std::string& name) const;
  const SymbolDecl* find_symbol(const std::string& name) const;
  ValueId add_value(Value v);

  // The op that defines a value, or nullptr for inputs.
  const Op* producer(ValueId id) const;
  // Indices of the ops that read a value, in order.
  std::vector<int> consumers(ValueId id) const;
  bool is_output(ValueId id) const;
  // The value an output stands for: an input written in place that is listed in `outputs`
  // stands for its updated value (the output written into it); any other value for itself.
  ValueId updated_value(ValueId id) const;

  // A readable listing of the graph, one op per line (used by --dump-after and tests).
  std::string to_text() const;

 private:
  mutable std::unordered_map<std::string, ValueId> name_index_;  // values[0, indexed_)
  mutable size_t indexed_ = 0;
};

std::string shape_to_string(const std::vector<Expr>& shape);  // "[N, 64]"

}  // namespace fuserc
