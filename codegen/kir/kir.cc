#include "codegen/kir/kir.h"

#include <sstream>

#include "core/base/diagnostics.h"

namespace fuserc::kir {

Type compute_type_of(DType t) {
  switch (t) {
    case DType::Bool: return Type::Bool;
    case DType::I32: return Type::Int32;
    case DType::I64: return Type::Int64;
    case DType::F16:
    case DType::BF16:
    case DType::F32: return Type::Float;
    case DType::F64: return Type::Double;
  }
  FUSERC_UNREACHABLE("bad dtype");
}

Type storage_type_of(DType t) {
  switch (t) {
    case DType::F16: return Type::Half;
    case DType::BF16: return Type::BFloat16;
    default: return compute_type_of(t);
  }
}

bool is_integer_type(Type t) {
  return t == Type::Int32 || t == Type::Int64 || t == Type::UInt32 || t == Type::UInt64;
}

namespace {
ValuePtr make(Value v) {
  return std::make_shared<const Value>(std::move(v));
}
}  // namespace

ValuePtr ref(const std::string& name, Type type) {
  Value v;
  v.kind = Value::Kind::Ref;
  v.name = name;
  v.type = type;
  return make(std::move(v));
}

ValuePtr literal(const fuserc::Literal& l, Type type) {
  Value v;
  v.kind = Value::Kind::Literal;
  v.literal = l;
  v.type = type;
  return make(std::move(v));
}

ValuePtr index_value(const Expr& e, Type type) {
  Value v;
  v.kind = Value::Kind::Index;
  v.index = e;
  v.type = type;
  return make(std::move(v));
}

ValuePtr load(const std::string& buffer, const Expr& offset, DType storage, Type type) {
  Value v;
  v.kind = Value::Kind::Load;
  v.name = buffer;
  v.index = offset;
  v.dtype = storage;
  v.type = type;
  return make(std::move(v));
}

ValuePtr lane(const std::string& vector, const Expr& lane_index, DType storage, Type type) {
  Value v;
  v.kind = Value::Kind::Lane;
  v.name = vector;
  v.index = lane_index;
  v.dtype = storage;
  v.type = type;
  return make(std::move(v));
}

ValuePtr op(OpKind kind, DType computation, Type type, std::vector<ValuePtr> operands) {
  Value v;
  v.kind = Value::Kind::Op;
  v.op = kind;
  v.dtype = computation;
  v.type = type;
  v.operands = std::move(operands);
  return make(std::move(v));
}

ValuePtr convert(const ValuePtr& x, DType from, DType to) {
  Value v;
  v.kind = Value::Kind::Convert;
  v.dtype = from;
  v.to = to;
  v.type = compute_type_of(to);
  v.operands = {x};
  return make(std::move(v));
}

ValuePtr call(const std::string& fn, Type type, std::vector<ValuePtr> operands) {
  Value v;
  v.kind = Value::Kind::Call;
  v.name = fn;
  v.type = type;
  v.operands = std::move(operands);
  return make(std::move(v));
}

ValuePtr all_of(std::vector<ValuePtr> conditions) {
  if (conditions.size() == 1) return conditions[0];
  Value v;
  v.kind = Value::Kind::And;
  v.type = Type::Bool;
  v.operands = std::move(conditions);
  return make(std::move(v));
}

ValuePtr any_of(std::vector<ValuePtr> conditions) {
  if (conditions.size() == 1) return conditions[0];
  Value v;
  v.kind = Value::Kind::Or;
  v.type = Type::Bool;
  v.operands = std::move(conditions);
  return make(std::move(v));
}

ValuePtr select(ValuePtr cond, ValuePtr if_true, ValuePtr if_false, Type type) {
  Value v;
  v.kind = Value::Kind::Select;
  v.type = type;
  v.operands = {std::move(cond), std::move(if_true), std::move(if_false)};
  return make(std::move(v));
}

Stmt let(Type type, const std::string& name, ValuePtr value) {
  Stmt s;
  s.kind = Stmt::Kind::Let;
  s.type = type;
  s.name = name;
  s.value = std::move(value);
  return s;
}

Stmt declare(Type type, const std::string& name, ValuePtr initial) {
  Stmt s;
  s.kind = Stmt::Kind::Declare;
  s.type = type;
  s.name = name;
  s.value = std::move(initial);
  return s;
}

Stmt assign(const std::string& name, ValuePtr value) {
  Stmt s;
  s.kind = Stmt::Kind::Assign;
  s.name = name;
  s.value = std::move(value);
  return s;
}

Stmt store(const std::string& buffer, const Expr& offset, DType dtype, ValuePtr value) {
  Stmt s;
  s.kind = Stmt::Kind::Store;
  s.buffer = buffer;
  s.index = offset;
  s.dtype = dtype;
  s.value = std::move(value);
  return s;
}

Stmt vec_declare(const std::string& name, DType dtype, int width) {
  Stmt s;
  s.kind = Stmt::Kind::VecDeclare;
  s.name = name;
  s.dtype = dtype;
  s.width = width;
  return s;
}

Stmt vec_load(const std::string& name, const std::string& buffer, const Expr& offset, DType dtype,
              int width, ValuePtr when) {
  Stmt s;
  s.kind = Stmt::Kind::VecLoad;
  s.cond = std::move(when);
  s.name = name;
  s.buffer = buffer;
  s.index = offset;
  s.dtype = dtype;
  s.width = width;
  return s;
}

Stmt vec_store(const std::string& name, const std::string& buffer, const Expr& offset, DType dtype,
               int width) {
  Stmt s = vec_load(name, buffer, offset, dtype, width);
  s.kind = Stmt::Kind::VecStore;
  return s;
}

Stmt lane_store(const std::string& vector, const Expr& lane_index, DType dtype, ValuePtr value) {
  Stmt s;
  s.kind = Stmt::Kind::LaneStore;
  s.name = vector;
  s.index = lane_index;
  s.dtype = dtype;
  s.value = std::move(value);
  return s;
}

Stmt if_then(ValuePtr cond, Block body, Block orelse) {
  Stmt s;
  s.kind = Stmt::Kind::If;
  s.cond = std::move(cond);
  s.body = std::move(body);
  s.orelse = std::move(orelse);
  return s;
}

Stmt for_loop(Type type, const std::string& var, const Expr& begin, const Expr& end, Block body,
              bool unroll, const Expr& step) {
  Stmt s;
  s.kind = Stmt::Kind::For;
  s.type = type;
  s.name = var;
  s.begin = begin;
  s.end = end;
  s.step = step;
  s.body = std::move(body);
  s.unroll = unroll;
  return s;
}

Stmt rolled_loop(Type type, const std::string& var, const Expr& begin, const Expr& end,
                 Block body) {
  Stmt s = for_loop(type, var, begin, end, std::move(body));
  s.rolled = true;
  return s;
}

ValuePtr element(const std::string& array, const Expr& index, Type type) {
  Value v;
  v.kind = Value::Kind::Element;
  v.name = array;
  v.index = index;
  v.type = type;
  return make(std::move(v));
}

Stmt array(Type type, const std::string& name, int width) {
  Stmt s;
  s.kind = Stmt::Kind::Array;
  s.type = type;
  s.name = name;
  s.width = width;
  return s;
}

Stmt shared_array(Type type, const std::string& name, int width) {
  Stmt s = array(type, name, width);
  s.kind = Stmt::Kind::Shared;
  return s;
}

Stmt element_store(const std::string& array_name, const Expr& index, ValuePtr value) {
  Stmt s;
  s.kind = Stmt::Kind::ElementStore;
  s.name = array_name;
  s.index = index;
  s.value = std::move(value);
  return s;
}

Stmt continue_loop() {
  Stmt s;
  s.kind = Stmt::Kind::Continue;
  return s;
}

Stmt eval(ValuePtr value) {
  Stmt s;
  s.kind = Stmt::Kind::Eval;
  s.value = std::move(value);
  return s;
}

Stmt ret() {
  Stmt s;
  s.kind = Stmt::Kind::Return;
  return s;
}

Stmt comment(const std::string& text) {
  Stmt s;
  s.kind = Stmt::Kind::Comment;
  s.text = text;
  return s;
}

// ---------------------------------------------------------------- text dump

namespace {

const char* type_name(Type t) {
  switch (t) {
    case Type::Bool: return "bool";
    case Type::Int32: return "i32";
    case Type::Int64: return "i64";
    case Type::Float: return "f32";
    case Type::Double: return "f64";
    case Type::Half: return "f16s";
    case Type::BFloat16: return "bf16s";
    case Type::UInt32: return "u32";
    case Type::UInt64: return "u64";
    case Type::WelfordF32: return "welford.f32";
    case Type::WelfordF64: return "welford.f64";
    case Type::LseF32: return "lse.f32";
    case Type::LseF64: return "lse.f64";
  }
  return "?";
}

std::string value_text(const ValuePtr& v) {
  std::string args;
  for (size_t i = 0; i < v->operands.size(); ++i)
    args += (i ? ", " : "") + value_text(v->operands[i]);
  switch (v->kind) {
    case Value::Kind::Ref: return v->name;
    case Value::Kind::Literal: return v->literal.str() + ":" + type_name(v->type);
    case Value::Kind::Index: return "{" + v->index.str() + "}";
    case Value::Kind::Load:
      return std::string("load.") + dtype_name(v->dtype) + " " + v->name + "[" + v->index.str() +
             "]";
    case Value::Kind::Lane: return v->name + ".v[" + v->index.str() + "]";
    case Value::Kind::Op:
      return std::string(op_name(v->op)) + "." + dtype_name(v->dtype) + "(" + args + ")";
    case Value::Kind::Convert:
      return std::string("convert.") + dtype_name(v->dtype) + "->" + dtype_name(v->to) + "(" +
             args + ")";
    case Value::Kind::Call: return v->name + "(" + args + ")";
    case Value::Kind::And: return "and(" + args + ")";
    case Value::Kind::Or: return "or(" + args + ")";
    case Value::Kind::Select: return "select(" + args + ")";
    case Value::Kind::Element: return v->name + "[" + v->index.str() + "]";
  }
  return "?";
}

void block_text(const Block& b, int depth, std::ostringstream& out) {
  std::string pad(depth * 2, ' ');
  for (const auto& s : b) {
    switch (s.kind) {
      case Stmt::Kind::Let:
        out << pad << "let " << s.name << ": " << type_name(s.type) << " = " << value_text(s.value)
            << "\n";
        break;
      case Stmt::Kind::Declare:
        out << pad << "var " << s.name << ": " << type_name(s.type)
            << (s.value ? " = " + value_text(s.value) : std::string()) << "\n";
        break;
      case Stmt::Kind::Assign: out << pad << s.name << " = " << value_text(s.value) << "\n"; break;
      case Stmt::Kind::Store:
        out << pad << "store." << dtype_name(s.dtype) << " " << s.buffer << "[" << s.index.str()
            << "] = " << value_text(s.value) << "\n";
        break;
      case Stmt::Kind::VecDeclare:
        out << pad << "vec " << s.name << ": " << dtype_name(s.dtype) << "x" << s.width << "\n";
        break;
      case Stmt::Kind::VecLoad:
        out << pad << "vecload " << s.name << " = " << s.buffer << "[" << s.index.str()
            << " +: " << s.width << "]" << (s.cond ? " if " + value_text(s.cond) : std::string())
            << "\n";
        break;
      case Stmt::Kind::VecStore:
        out << pad << "vecstore " << s.buffer << "[" << s.index.str() << " +: " << s.width
            << "] = " << s.name << "\n";
        break;
      case Stmt::Kind::LaneStore:
        out << pad << s.name << ".v[" << s.index.str() << "] = " << value_text(s.value) << "\n";
        break;
      case Stmt::Kind::If:
        out << pad << "if " << value_text(s.cond) << "\n";
        block_text(s.body, depth + 1, out);
        if (!s.orelse.empty()) {
          out << pad << "else\n";
          block_text(s.orelse, depth + 1, out);
        }
        break;
      case Stmt::Kind::For:
        out << pad << "for " << s.name << " in [" << s.begin.str() << ", " << s.end.str() << ")"
            << (s.step.is_const(1) ? "" : " step " + s.step.str()) << (s.unroll ? " unroll" : "")
            << (s.rolled ? " rolled" : "") << "\n";
        block_text(s.body, depth + 1, out);
        break;
      case Stmt::Kind::Array:
        out << pad << "array " << s.name << ": " << type_name(s.type) << "x" << s.width << "\n";
        break;
      case Stmt::Kind::Shared:
        out << pad << "shared " << s.name << ": " << type_name(s.type) << "x" << s.width << "\n";
        break;
      case Stmt::Kind::ElementStore:
        out << pad << s.name << "[" << s.index.str() << "] = " << value_text(s.value) << "\n";
        break;
      case Stmt::Kind::Continue: out << pad << "continue\n"; break;
      case Stmt::Kind::Eval: out << pad << value_text(s.value) << "\n"; break;
      case Stmt::Kind::Return: out << pad << "return\n"; break;
      case Stmt::Kind::Comment: out << pad << "# " << s.text << "\n"; break;
    }
  }
}

void value_symbols(const ValuePtr& v, std::set<std::string>& out) {
  if (!v) return;
  if (v->kind == Value::Kind::Index || v->kind == Value::Kind::Load ||
      v->kind == Value::Kind::Lane || v->kind == Value::Kind::Element)
    for (const auto& s : free_symbols(v->index)) out.insert(s);
  for (const auto& o : v->operands) value_symbols(o, out);
}

}  // namespace

std::set<std::string> symbols_used(const Block& block) {
  std::set<std::string> out;
  for (const auto& s : block) {
    value_symbols(s.value, out);
    value_symbols(s.cond, out);
    for (const Expr* e : {&s.index, &s.begin, &s.end, &s.step})
      for (const auto& name : free_symbols(*e)) out.insert(name);
    auto body = symbols_used(s.body);
    out.insert(body.begin(), body.end());
    auto orelse = symbols_used(s.orelse);
    out.insert(orelse.begin(), orelse.end());
  }
  return out;
}

namespace {

// Names a value reads: locals and parameters (Ref), arrays (Element), vectors (Lane), and every
// symbol of its index expressions.
void value_reads(const ValuePtr& v, std::set<std::string>& out) {
  if (!v) return;
  using K = Value::Kind;
  if (v->kind == K::Ref || v->kind == K::Element || v->kind == K::Lane) out.insert(v->name);
  for (const auto& o : v->operands) value_reads(o, out);
}

void block_reads(const Block& block, std::set<std::string>& out) {
  for (const auto& s : block) {
    value_reads(s.value, out);
    value_reads(s.cond, out);
    if (s.kind == Stmt::Kind::VecStore) out.insert(s.name);
    block_reads(s.body, out);
    block_reads(s.orelse, out);
  }
  auto symbols = symbols_used(block);
  out.insert(symbols.begin(), symbols.end());
}

}  // namespace

std::set<std::string> names_read(const Block& block) {
  std::set<std::string> out;
  block_reads(block, out);
  return out;
}

namespace {

bool pure(const ValuePtr& v) {
  return v->kind == Value::Kind::Index || v->kind == Value::Kind::Ref ||
         v->kind == Value::Kind::Literal;
}

void register_arrays(const Block& block, std::set<std::string>& out) {
  for (const auto& s : block) {
    if (s.kind == Stmt::Kind::Array) out.insert(s.name);
    register_arrays(s.body, out);
    register_arrays(s.orelse, out);
  }
}

// Removes, in place, what `reads` never mentions; true when something went. Stores into
// parameters are never removed.
bool remove_unread(Block& block, const std::set<std::string>& reads,
                   const std::set<std::string>& arrays) {
  bool changed = false;
  Block kept;
  for (auto& s : block) {
    bool dead = (s.kind == Stmt::Kind::Let && pure(s.value) && !reads.count(s.name)) ||
                ((s.kind == Stmt::Kind::Array || s.kind == Stmt::Kind::ElementStore) &&
                 arrays.count(s.name) && !reads.count(s.name));
    if (dead) {
      changed = true;
      continue;
    }
    changed = remove_unread(s.body, reads, arrays) || changed;
    changed = remove_unread(s.orelse, reads, arrays) || changed;
    kept.push_back(std::move(s));
  }
  block = std::move(kept);
  return changed;
}

}  // namespace

void remove_unused_locals(Block& body) {
  while (true) {
    std::set<std::string> reads, arrays;
    block_reads(body, reads);
    register_arrays(body, arrays);
    if (!remove_unread(body, reads, arrays)) return;
  }
}

std::string to_text(const Kernel& k) {
  std::ostringstream out;
  for (const auto& c : k.callees) out << "called by " << k.name << ": " << to_text(c);
  out << "kernel " << k.name << " (threads " << k.max_threads << ", index "
      << type_name(k.index_type) << ")\n";
  for (const auto& p : k.params)
    out << "  param " << p.name << ": "
        << (p.kind == Param::Kind::Pointer
                ? std::string(p.is_const ? "const " : "") + "*" + dtype_name(p.dtype)
                : type_name(p.type))
        << "\n";
  block_text(k.body, 1, out);
  return out.str();
}

}  // namespace fuserc::kir
