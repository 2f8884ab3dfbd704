// Owns binding the symbols of a graph from what a user supplies at run time, and checking
// every input against them: every declared input must be present with its dtype and rank,
// symbols get their values in the order the compiler planned (an input extent that is the
// symbol; the value of a scalar input declared with "symbol"; an extent k * S + c solved for S,
// which must divide), each within its declared [min, max], and then every input extent (fixed,
// a symbol, an expression) must equal what the bound symbols give. Used by `eval` (from the
// Fusion) and by the runtime (from a package), so both refuse bad inputs with the same words.
// Expressions are not evaluated here: the caller's BindingSizes does (the interpreter over
// Exprs, the runtime over the package's size program).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/safetensors.h"

namespace fuserc {

struct ExtentSpec {
  enum class Kind : uint8_t { Fixed, Symbol, Expression };
  Kind kind = Kind::Fixed;
  int64_t value = 0;  // Fixed
  int symbol = -1;    // Symbol: index into BindingRules::symbols
  std::string text;   // Expression: its formula, for messages
};

struct InputSpec {
  std::string name;
  DType dtype = DType::F32;
  bool scalar = false;  // declared without a shape: a rank-0 tensor in files
  std::vector<ExtentSpec> shape;
  int sets_symbol = -1;  // a scalar input whose value binds this symbol
};

struct SymbolRange {
  std::string name;
  int64_t min = 1;
  int64_t max = 0;
};

struct BindStepSpec {
  enum class Kind : uint8_t { Extent, Scalar, Solve };
  Kind kind = Kind::Extent;
  int symbol = 0;
  int input = 0;  // index into BindingRules::inputs
  int dim = 0;    // Extent, Solve
};

struct BindingRules {
  std::vector<InputSpec> inputs;   // what the caller passes, in order (constants excluded)
  std::vector<SymbolRange> symbols;
  std::vector<BindStepSpec> steps;
  std::vector<std::string> constants;  // inputs the graph holds itself (never passed)
};

// The expressions a binding needs, evaluated by the caller.
class BindingSizes {
 public:
  virtual ~BindingSizes() = default;
  // k and c of Solve step `step` (the extent is k * S + c), from the symbols the steps before
  // it bound (the others are unset). Throws UserError when they cannot be evaluated.
  virtual void solve_terms(size_t step, const std::vector<int64_t>& symbols, int64_t* k,
                           int64_t* c) = 0;
};

using SymbolValues = std::map<std::string, int64_t>;

// Binds the symbols from the inputs' shapes (one per input, in order; a scalar's is empty)
// and the values of scalar inputs that set a symbol (`scalar_value(i)`, asked only for those).
// Checks ranks, solves, checks ranges and the fixed and plain-symbol extents; returns every
// symbol's value (package order; a symbol nothing binds gets its minimum). Expression extents
// are checked afterwards by check_expression_extents, once the sizes are evaluated.
// Throws UserError naming `file` (the caller: a file, "fuserc_bind_shapes").
std::vector<int64_t> bind_symbols(const BindingRules& rules, BindingSizes& sizes,
                                  const std::vector<std::vector<int64_t>>& shapes,
                                  const std::function<int64_t(size_t input)>& scalar_value,
                                  const std::string& file);

// Checks the Expression extents of the inputs against `value(input, dim)`, the expression's
// value for the bound symbols ("input 'x' dimension 0 is 590 but the graph says B*197 = 591").
void check_expression_extents(const BindingRules& rules,
                              const std::vector<std::vector<int64_t>>& shapes,
                              const std::function<int64_t(size_t input, size_t dim)>& value,
                              const std::string& file);

// The shapes, and a scalar-value reader, of input tensors read from `file`: checks that every
// input is there with its dtype and that nothing else is (a constant passed in is refused).
std::vector<std::vector<int64_t>> shapes_of_tensors(const BindingRules& rules,
                                                    const TensorMap& tensors,
                                                    const std::string& file);
int64_t scalar_value_of(const BindingRules& rules, const TensorMap& tensors, size_t input);

// The value of a host scalar of an integer dtype (i32 or i64) at `value`.
int64_t integer_scalar(DType dtype, const void* value);

// A message for a symbol value: "symbol 'S' = 5".
std::string describe_symbols(const BindingRules& rules, const std::vector<int64_t>& values);

}  // namespace fuserc
