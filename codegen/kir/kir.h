// Owns the kernel IR: what lowering produces and the CUDA emitter prints. A kernel is a list
// of parameters and a tree of statements (declarations, stores, vector loads/stores, ifs and
// loops); values are small typed expression trees whose leaves are locals, parameters,
// literals, integer index expressions (core Exprs) and loads. Nothing here knows CUDA syntax.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/base/dtype.h"
#include "core/expr/expr.h"
#include "core/ir/fusion.h"

namespace fuserc::kir {

// The C types kernel values have.
enum class Type : uint8_t {
  Bool,
  Int32,
  Int64,
  Float,
  Double,
  Half,
  BFloat16,
  UInt32,
  UInt64,
  WelfordF32,
  WelfordF64,  // running (mean, m2, count, sum) of a variance, in float or double
  LseF32,
  LseF64,  // an online log-sum-exp: running (max, sum of exp(x - max)), in float or double
};

// The type a value of a dtype is computed in (f16/bf16 in float) and stored as.
Type compute_type_of(DType t);
Type storage_type_of(DType t);
bool is_integer_type(Type t);

struct Value;
using ValuePtr = std::shared_ptr<const Value>;

struct Value {
  enum class Kind : uint8_t {
    Ref,      // a local or a parameter, by name
    Literal,  // a number, of `type`
    Index,    // an integer (or, with type Bool, a comparison) index expression
    Load,     // name[index], read in storage dtype `dtype`, converted to `type`
    Lane,     // name.v[index] of a vector local holding `dtype`, converted to `type`
    Op,       // an op of the op table on operands already in `type`-compatible form;
              // `dtype` is the computation dtype (it picks the CUDA spelling)
    Convert,  // operand 0 (of dtype `dtype`) converted to `type` with the contract's semantics
              // for the target dtype `to` (rounding to f16/bf16, saturating float->int, !=0)
    Call,     // a helper function `name` applied to the operands
    And,      // all operands (bool) true
    Or,       // some operand (bool) true
    Select,   // operands[0] ? operands[1] : operands[2]
    Element,  // name[index] of a local or shared array (or a pointer parameter), as stored
  };
  Kind kind = Kind::Literal;
  Type type = Type::Float;
  std::string name;
  fuserc::Literal literal;
  Expr index;
  DType dtype = DType::F32;
  DType to = DType::F32;
  OpKind op = OpKind::Add;
  std::vector<ValuePtr> operands;
};

// Constructors.
ValuePtr ref(const std::string& name, Type type);
ValuePtr literal(const fuserc::Literal& l, Type type);
ValuePtr index_value(const Expr& e, Type type);  // type Bool for a comparison
ValuePtr load(const std::string& buffer, const Expr& offset, DType storage, Type type);
ValuePtr lane(const std::string& vector, const Expr& lane, DType storage, Type type);
ValuePtr op(OpKind kind, DType computation, Type type, std::vector<ValuePtr> operands);
ValuePtr convert(const ValuePtr& v, DType from, DType to);
ValuePtr call(const std::string& fn, Type type, std::vector<ValuePtr> operands);
ValuePtr all_of(std::vector<ValuePtr> conditions);
ValuePtr any_of(std::vector<ValuePtr> conditions);
ValuePtr select(ValuePtr cond, ValuePtr if_true, ValuePtr if_false, Type type);
ValuePtr element(const std::string& array, const Expr& index, Type type);

struct Stmt;
using Block = std::vector<Stmt>;

struct Stmt {
  enum class Kind : uint8_t {
    Let,           // const type name = value;
    Declare,       // type name;  or  type name = value;  (a variable, assigned later)
    Assign,        // name = value;
    Store,         // buffer[index] = value, converted to the storage of `dtype`
    VecDeclare,    // a vector local of `width` elements of `dtype`
    VecLoad,       // const vector local `name` = width elements of buffer from index (only
                   // where `cond` holds, when set: zeros elsewhere)
    VecStore,      // width elements of vector local `name` to buffer from index
    LaneStore,     // name.v[index] = value, converted to the storage of `dtype`
    Array,         // type name[width];  (registers)
    Shared,        // __shared__ type name[width];
    ElementStore,  // name[index] = value  (an array, or a pointer parameter, as is)
    If,            // if (cond) body else orelse
    For,           // for (loop_type name = begin; name < end; name += step) body
    Return,
    Continue,
    Eval,     // value;  (a call for its effect: __syncthreads(), filling an array)
    Comment,  // a line of text
  };
  Kind kind = Kind::Comment;
  Type type = Type::Float;
  std::string name;
  ValuePtr value;
  std::string buffer;
  Expr index;
  DType dtype = DType::F32;
  int width = 1;
  ValuePtr cond;
  Expr begin, end, step = Expr(1);
  bool unroll = false;  // For: fully unrolled
  bool rolled = false;  // For: never unrolled (one copy of a large body)
  bool maybe_unused = false;  // Let: a local the statements after it may not read
  Block body, orelse;
  std::string text;
};

// Statement constructors.
Stmt let(Type type, const std::string& name, ValuePtr value);
Stmt declare(Type type, const std::string& name, ValuePtr initial = nullptr);
Stmt assign(const std::string& name, ValuePtr value);
Stmt store(const std::string& buffer, const Expr& offset, DType dtype, ValuePtr value);
Stmt vec_declare(const std::string& name, DType dtype, int width);
// With `when`, the memory is read only where `when` holds (the vector is zeros elsewhere): a
// load under a condition (a branch of cat or pad) whose address is valid only there.
Stmt vec_load(const std::string& name, const std::string& buffer, const Expr& offset, DType dtype,
              int width, ValuePtr when = nullptr);
Stmt vec_store(const std::string& name, const std::string& buffer, const Expr& offset, DType dtype,
               int width);
Stmt lane_store(const std::string& vector, const Expr& lane, DType dtype, ValuePtr value);
Stmt if_then(ValuePtr cond, Block body, Block orelse = {});
Stmt for_loop(Type type, const std::string& var, const Expr& begin, const Expr& end, Block body,
              bool unroll = false, const Expr& step = Expr(1));
// The same loop, kept rolled.
Stmt rolled_loop(Type type, const std::string& var, const Expr& begin, const Expr& end, Block body);
Stmt array(Type type, const std::string& name, int width);
Stmt shared_array(Type type, const std::string& name, int width);
Stmt element_store(const std::string& array, const Expr& index, ValuePtr value);
Stmt ret();
Stmt continue_loop();
Stmt eval(ValuePtr value);
Stmt comment(const std::string& text);

struct Param {
  std::string name;
  enum class Kind : uint8_t { Pointer, Scalar } kind = Kind::Pointer;
  DType dtype = DType::F32;    // element dtype of a pointer; dtype of a scalar input
  Type type = Type::Float;     // the C type of a scalar parameter
  bool is_const = true;        // pointer to const
  bool restrict = true;        // no other parameter points into the same buffer
  Type element = Type::Float;  // a workspace pointer's element type (when `workspace`)
  bool workspace = false;      // a pointer to kernel-private scratch (partials, semaphores)
};

struct Kernel {
  std::string name;
  std::vector<std::string> header_comment;  // lines, without comment markers
  std::vector<Param> params;
  // Graph symbols spelled otherwise in the kernel's text (a symbol named `float` or `NULL` is
  // the parameter fz_sym_float): symbol name -> its spelling, for those that differ.
  std::map<std::string, std::string> symbol_spelling;
  int max_threads = 128;  // __launch_bounds__
  Type index_type = Type::Int32;
  Block body;
  // Device functions the body calls (the members of a combo kernel,
  // codegen/lower/combo_kernel.h): each is a kernel of its own, printed before this one as a
  // function of its parameters and of its block index, which it reads where a kernel reads
  // blockIdx.x.
  std::vector<Kernel> callees;
  // A callee called from several places: compiled once (never inlined), so that a combo kernel
  // over many members of a few shapes holds one copy of each member's code.
  bool called_often = false;
};

// A readable dump of the kernel IR (for --dump-after=lower and tests).
std::string to_text(const Kernel& k);

// Every symbol name used by the index expressions of a block (index variables included).
std::set<std::string> symbols_used(const Block& block);
// Every name a block reads: locals, parameters, arrays, and the symbols of its expressions.
std::set<std::string> names_read(const Block& block);

// Dead-code removal on a kernel body: index locals (`const int row = ...`) nothing reads, and
// register arrays written but never read, with their stores.
void remove_unused_locals(Block& body);

}  // namespace fuserc::kir
