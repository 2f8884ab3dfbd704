// Owns the Fusion IR: a validated, fully typed and shaped graph of values and ops, as the
// front end builds it from the JSON contract. Values are numbered; every value has a dtype
// and a symbolic shape (one Expr per dimension; rank 0 is an empty shape). Ops refer to
// values by number and keep their attributes normalized (negative dims resolved, slice bounds
// clamped, reshape's -1 inferred), so no later stage re-interprets the JSON.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/constant_data.h"
#include "core/base/dtype.h"
#include "core/expr/expr.h"
#include "core/ir/op_table.h"

namespace fuserc {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

// A number written in the graph: `0.5`, `-1`, `true`, or a size literal {"size": E}, an
// integer whose value is the extent expression E at run time (kernels read it as an argument,
// `size_param_name(size_index)`, that the package's size program computes).
struct Literal {
  enum class Kind : uint8_t { Bool, Int, Float, Size };
  Kind kind = Kind::Int;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  Expr size;               // Size: the expression
  int32_t size_index = -1;  // Size: its index in Fusion::size_literals()

  static Literal of_bool(bool v);
  static Literal of_int(int64_t v);
  static Literal of_float(double v);
  static Literal of_size(const Expr& e, int32_t index);
  bool is_size() const { return kind == Kind::Size; }
  // The dtype a literal stands for in type promotion: bool, i64 (integers and sizes) or f32.
  DType dtype() const;
  // The value. A size literal has none until its symbols are bound: these are internal errors
  // for one (callers evaluate `size` first, see with_size_value).
  double as_double() const;
  int64_t as_int() const;  // floats truncate toward zero, saturating
  bool as_bool() const;
  // A size literal with its value for bound symbols: an Int literal (other literals unchanged).
  Literal with_size_value(int64_t value) const;
  std::string str() const;  // as written in JSON ("0.5", "-1", "true", "size(N * H * W - 1)")
  bool operator==(const Literal& o) const;
};

// The kernel parameter that carries size literal `index`.
std::string size_param_name(int32_t index);

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
  std::string sets_symbol;  // a scalar input declared with "symbol": the symbol its value binds
  std::shared_ptr<const ConstantData> constant;  // an input with "data": its values (the caller
                                                 // never passes it)
  int def_op = -1;                                 // index into Fusion::ops; -1 for graph inputs
  int input_index = -1;                            // index into Fusion::inputs; -1 for op results
  bool scalar_input = false;                       // a graph input declared without "shape"
  std::optional<std::pair<double, double>> range;  // inputs: the values taken in practice

  int rank() const { return static_cast<int>(shape.size()); }
  bool is_input() const { return input_index >= 0; }
  bool is_constant() const { return constant != nullptr; }
  Expr numel() const { return product(shape); }
};

enum class GeluApproximate : uint8_t { None, Tanh };

// The activation a matrix product applies to its result before writing it (the
// fuse-epilogues pass moves a following relu or gelu into the product).
enum class MatmulActivation : uint8_t { None = 0, Relu, Gelu, GeluTanh };

// A view of a matrix product's operand that the product reads in place (the absorb-views pass
// folds slices, permutes, reshapes, broadcasts and unit dimensions between a value and the
// product into it): the product sees a tensor of extents `shape` whose element i is the source's
// element at offset + sum(i_d * stride_d). `logical` counts in the source's row-major order
// (what eval reads), `memory` in its buffer as laid out (an input's declared strides). Empty
// shape: no view.
struct OperandView {
  std::vector<Expr> shape;
  std::vector<Expr> logical, memory;
  Expr logical_offset = Expr(0), memory_offset = Expr(0);  // a slice's first element
  std::string views;  // the ops it replaces, first applied first: "permute", "reshape permute"
  bool active() const { return !shape.empty(); }
};

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
  std::vector<Expr> steps;  // slice: positive for every binding (integers, symbols, expressions)
  std::vector<std::pair<Expr, Expr>> pads;  // pad: (lo, hi) per dim, negative crops
  Literal value;                                  // pad fill, full value
  int64_t dim = 0;                                // unsqueeze, cat: normalized
  Expr length;                                    // iota
  Literal start, step;                            // iota
  bool allow_tf32 = false;  // matmul, linear, attention: f32 products may use TF32
  bool is_causal = false;   // attention (expanded by the front end)
  bool enable_gqa = false;  // attention
  std::optional<double> scale;  // attention: of the scores (default 1 / sqrt(E))
  // conv (expanded by the front end): per spatial dim, normalized to their defaults
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
  MatmulActivation activation = MatmulActivation::None;  // matmul, linear (fuse-epilogues)
  std::array<OperandView, 2> views;  // matmul, linear: how each operand is read (absorb-views)
  OperandView result_view;  // matmul, linear: the product (shape: the product's own) written
                            // through strides into the result, a permute of it (absorb-views)
};

// How a symbol gets its value from the inputs at run time (core/frontend/symbol_binding.h
// plans these in this order): from an input extent that is the symbol itself, from a scalar
// input declared with "symbol", or solved from an input extent k * S + c whose k and c use
// only symbols bound by earlier steps.
struct SymbolBindStep {
  enum class Kind : uint8_t { Extent, Scalar, Solve };
  Kind kind = Kind::Extent;
  std::string symbol;
  int input = -1;  // index into Fusion::inputs
  int dim = -1;    // Extent, Solve: the input's dimension
  Expr k, c;       // Solve: the extent is k * symbol + c (k provably positive)
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
  std::vector<SymbolBindStep> bind_steps;  // how every bound symbol gets its value, in order

  const Value& value(ValueId id) const;
  Value& value(ValueId id);
  // By name, in constant time (an index kept as values are appended; a value's name must not
  // change once it is in `values`).
  std::optional<ValueId> find_value(const std::string& name) const;
  const SymbolDecl* find_symbol(const std::string& name) const;
  ValueId add_value(Value v);
  // The size literal {"size": e} (an expression that is not a constant): its index in
  // size_literals(), appended when the graph has none equal to it yet.
  Literal size_literal(const Expr& e);
  // The distinct {"size": E} of the graph, by index (only size_literal appends to them).
  const std::vector<Expr>& size_literals() const { return size_literals_; }

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
  std::vector<Expr> size_literals_;
  std::unordered_map<Expr, int32_t, ExprHash> size_index_;  // size_literals_ by expression
};

std::string shape_to_string(const std::vector<Expr>& shape);  // "[N, 64]"

// Per position in f.inputs: the input's index among those the caller passes (constants left
// out), or, for a constant, its index among the constants. How packages and the runtime
// number the graph's interface.
std::vector<int> interface_indices(const Fusion& f);

}  // namespace fuserc
