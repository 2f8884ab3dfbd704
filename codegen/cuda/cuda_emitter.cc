#include "codegen/cuda/cuda_emitter.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "core/base/diagnostics.h"
#include "core/expr/expr_node.h"

namespace fuserc::cuda {

extern const char* const kPreambleText;  // generated from preamble.cuh (codegen/CMakeLists.txt)
extern const char* const kPhiloxText;    // generated from core/base/philox_impl.h
extern const char* const kErfinvText;    // generated from core/base/erfinv_impl.h

const std::string& preamble() {
  static const std::string text =
      std::string(kPreambleText) + "\n// ---- Philox4x32-10 (core/base/philox_impl.h)\n" +
      kPhiloxText + "\n// ---- erfinv (core/base/erfinv_impl.h)\n" + kErfinvText + "\n";
  return text;
}

const char* c_type(kir::Type t) {
  switch (t) {
    case kir::Type::Bool: return "bool";
    case kir::Type::Int32: return "int";
    case kir::Type::Int64: return "long long";
    case kir::Type::Float: return "float";
    case kir::Type::Double: return "double";
    case kir::Type::Half: return "__half";
    case kir::Type::BFloat16: return "__nv_bfloat16";
    case kir::Type::UInt32: return "unsigned int";
    case kir::Type::UInt64: return "unsigned long long";
    case kir::Type::WelfordF32: return "fz_welford<float>";
    case kir::Type::WelfordF64: return "fz_welford<double>";
    case kir::Type::LseF32: return "fz_lse<float>";
    case kir::Type::LseF64: return "fz_lse<double>";
  }
  FUSERC_UNREACHABLE("bad kernel type");
}

std::string param_c_type(const kir::Param& p) {
  if (p.kind == kir::Param::Kind::Scalar) return c_type(p.type);
  std::string s = p.is_const ? "const " : "";
  s += p.workspace ? c_type(p.element) : c_type(kir::storage_type_of(p.dtype));
  s += "*";
  if (p.restrict) s += " __restrict__";
  return s;
}

namespace {

// ---------------------------------------------------------------- index arithmetic

enum Prec { kSelect = 1, kOr = 2, kCompare = 3, kAdd = 4, kMul = 5, kAtom = 6 };

class IndexPrinter {
 public:
  // `block_x`: the name that stands for blockIdx.x (a combo member's parameter), or "".
  // `spelled`: graph symbols spelled otherwise (kir::Kernel::symbol_spelling).
  explicit IndexPrinter(kir::Type index_type, std::string block_x = {},
                        const std::map<std::string, std::string>* spelled = nullptr)
      : index64_(index_type == kir::Type::Int64), block_x_(std::move(block_x)), spelled_(spelled) {}

  std::string print(const Expr& e, int min_prec = kSelect) const {
    int p = 0;
    std::string s = body(e, p);
    return p < min_prec ? "(" + s + ")" : s;
  }

 private:
  bool index64_;
  std::string block_x_;
  const std::map<std::string, std::string>* spelled_;

  std::string constant(int64_t v) const {
    if (!index64_) {
      FUSERC_CHECK(
          v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(),
          "constant " + std::to_string(v) + " in a 32-bit index expression");
      if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
      return std::to_string(v);
    }
    if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
    if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min())
      return std::to_string(v) + "LL";
    return std::to_string(v);
  }

  std::string symbol(const Expr& e) const {
    // CUDA's builtin indices are unsigned: convert them to the index type (a member's block
    // parameter too).
    if (e.name().find('.') != std::string::npos)
      return std::string(index64_ ? "(long long)" : "(int)") +
             (e.name() == "blockIdx.x" && !block_x_.empty() ? block_x_ : e.name());
    if (spelled_ && e.op() == ExprOp::Sym && e.args().empty()) {  // a graph symbol, no index
      auto it = spelled_->find(e.name());
      if (it != spelled_->end()) return it->second;
    }
    return e.name();
  }

  bool nonnegative(const Expr& e) const { return e.lo() >= 0; }

  // CUDA's min and max have no (long long, int) overload: with 64-bit indices a constant
  // argument is a long long literal too.
  std::string minmax_arg(const Expr& a) const {
    if (index64_ && a.op() == ExprOp::Const && a.value() != std::numeric_limits<int64_t>::min())
      return std::to_string(a.value()) + "LL";
    return print(a);
  }

  std::string term(const Expr& t, bool& negative) const {
    negative = false;
    if (t.op() != ExprOp::Mul) return print(t, kMul);
    std::string s;
    for (const auto& f : t.args()) s += (s.empty() ? "" : " * ") + print(f, kMul + 1);
    int64_t c = t.value();
    negative = c < 0;
    uint64_t mag = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    if (mag != 1) s += " * " + constant(static_cast<int64_t>(mag));
    return s;
  }

  std::string body(const Expr& e, int& prec) const {
    prec = kAtom;
    switch (e.op()) {
      case ExprOp::Const:
        if (e.value() < 0) prec = kMul;
        return constant(e.value());
      case ExprOp::Sym: return symbol(e);
      case ExprOp::Mul: {
        prec = kMul;
        bool neg;
        std::string s = term(e, neg);
        return neg ? "-" + s : s;
      }
      case ExprOp::Add: {
        prec = kAdd;
        std::string s;
        for (const auto& t : e.args()) {
          bool neg;
          std::string ts = term(t, neg);
          if (s.empty())
            s = neg ? "-" + ts : ts;
          else
            s += (neg ? " - " : " + ") + ts;
        }
        int64_t c = e.value();
        if (c > 0) s += " + " + constant(c);
        if (c < 0) s += " - " + constant(-c);
        return s;
      }
      case ExprOp::FloorDiv:
      case ExprOp::Mod: {
        const Expr& a = e.args()[0];
        const Expr& b = e.args()[1];
        bool div = e.op() == ExprOp::FloorDiv;
        if (nonnegative(a) && b.lo() > 0) {
          prec = kMul;
          return print(a, kMul) + (div ? " / " : " % ") + print(b, kMul + 1);
        }
        return std::string(div ? "fz_floordiv(" : "fz_floormod(") + print(a) + ", " + print(b) +
               ")";
      }
      case ExprOp::CeilDiv: {
        const Expr& a = e.args()[0];
        const Expr& b = e.args()[1];
        if (nonnegative(a) && b.lo() > 0) {
          prec = kMul;
          return "(" + print(a, kAdd) + " + " + print(b, kAdd + 1) + " - 1) / " +
                 print(b, kMul + 1);
        }
        return "fz_ceildiv(" + print(a) + ", " + print(b) + ")";
      }
      case ExprOp::Min:
        return "min(" + minmax_arg(e.args()[0]) + ", " + minmax_arg(e.args()[1]) + ")";
      case ExprOp::Max:
        return "max(" + minmax_arg(e.args()[0]) + ", " + minmax_arg(e.args()[1]) + ")";
      case ExprOp::Lt:
      case ExprOp::Le:
      case ExprOp::Eq:
      case ExprOp::Ne: {
        prec = kCompare;
        const char* op = e.op() == ExprOp::Lt   ? " < "
                         : e.op() == ExprOp::Le ? " <= "
                         : e.op() == ExprOp::Eq ? " == "
                                                : " != ";
        return print(e.args()[0], kAdd) + op + print(e.args()[1], kAdd);
      }
      case ExprOp::Select:
        prec = kSelect;
        return print(e.args()[0], kCompare) + " ? " + print(e.args()[1], kOr) + " : " +
               print(e.args()[2], kSelect);
    }
    FUSERC_UNREACHABLE("bad expression op");
  }
};

// ---------------------------------------------------------------- values

// Infinities and NaN are bit patterns (CUDA has no literal for them); -inf is negated +inf so
// that every hexadecimal constant fits its signed parameter type.
std::string float_literal(double v, bool single) {
  if (std::isnan(v))
    return single ? "__int_as_float(0x7fffffff)" : "__longlong_as_double(0x7fffffffffffffffLL)";
  if (std::isinf(v)) {
    std::string inf =
        single ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)";
    return v > 0 ? inf : "(-" + inf + ")";
  }
  char buf[64];
  std::to_chars_result r;
  if (single)
    r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  else
    r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return single ? s + "f" : s;
}

class ValuePrinter {
 public:
  explicit ValuePrinter(kir::Type index_type, const std::string& block_x = {},
                        const std::map<std::string, std::string>* spelled = nullptr)
      : index_(index_type, block_x, spelled) {}

  std::string print(const kir::ValuePtr& v) const {
    using K = kir::Value::Kind;
    switch (v->kind) {
      case K::Ref: return v->name;
      case K::Literal: return literal(v->literal, v->type);
      case K::Index: return index_.print(v->index);
      case K::Load: return from_storage(v->name + "[" + index_.print(v->index) + "]", v->dtype);
      case K::Lane: return from_storage(v->name + ".v[" + index_.print(v->index) + "]", v->dtype);
      case K::Op: return op(*v);
      case K::Convert: return convert(primary(v->operands[0]), v->dtype, v->to);
      case K::Call: {
        std::string s = v->name + "(";
        for (size_t i = 0; i < v->operands.size(); ++i)
          s += (i ? ", " : "") + print(v->operands[i]);
        return s + ")";
      }
      case K::And: {
        std::string s;
        for (const auto& o : v->operands) s += (s.empty() ? "" : " && ") + wrap(o);
        return s;
      }
      case K::Or: {
        std::string s;
        for (const auto& o : v->operands) s += (s.empty() ? "" : " || ") + wrap(o);
        return "(" + s + ")";
      }
      case K::Select:
        return "(" + print(v->operands[0]) + " ? " + print(v->operands[1]) + " : " +
               print(v->operands[2]) + ")";
      case K::Element: return v->name + "[" + index_.print(v->index) + "]";
    }
    FUSERC_UNREACHABLE("bad value kind");
  }

  static std::string from_storage(const std::string& x, DType dtype) {
    if (dtype == DType::F16) return "__half2float(" + x + ")";
    if (dtype == DType::BF16) return "__bfloat162float(" + x + ")";
    return x;
  }

  static std::string to_storage(const std::string& x, DType dtype) {
    if (dtype == DType::F16) return "__float2half_rn(" + x + ")";
    if (dtype == DType::BF16) return "__float2bfloat16_rn(" + x + ")";
    return x;
  }

 private:
  IndexPrinter index_;

  // Parenthesized unless it is a simple token or a call.
  // `v` as the operand of a C cast: index arithmetic and operators in parentheses.
  std::string primary(const kir::ValuePtr& v) const {
    std::string s = print(v);
    using K = kir::Value::Kind;
    bool name = !s.empty();
    for (char ch : s) name = name && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    bool needs = v->kind == K::Op || v->kind == K::And || v->kind == K::Select ||
                 (v->kind == K::Index && !name);
    return needs ? "(" + s + ")" : s;
  }

  std::string wrap(const kir::ValuePtr& v) const {
    std::string s = print(v);
    if (v->kind == kir::Value::Kind::Index && v->index.op() >= ExprOp::Lt) return "(" + s + ")";
    return s;
  }

  static std::string literal(const fuserc::Literal& l, kir::Type t) {
    switch (t) {
      case kir::Type::Bool: return l.as_bool() ? "true" : "false";
      case kir::Type::Float: return float_literal(l.as_double(), true);
      case kir::Type::Double: return float_literal(l.as_double(), false);
      case kir::Type::Int32: {
        int64_t v = static_cast<int32_t>(static_cast<uint32_t>(l.as_int()));
        if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
        return std::to_string(v);
      }
      case kir::Type::Int64: {
        int64_t v = l.as_int();
        if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
        return std::to_string(v) + "LL";
      }
      default: break;
    }
    FUSERC_UNREACHABLE("literal of a storage type");
  }

  std::string op(const kir::Value& v) const {
    const OpInfo& info = op_info(v.op);
    std::string tmpl = info.cuda;
    FUSERC_CHECK(!tmpl.empty(), std::string("op ") + info.name + " has no CUDA spelling");
    bool single = compute_type(v.dtype) == ComputeType::F32;
    std::string out;
    for (size_t i = 0; i < tmpl.size(); ++i) {
      if (tmpl[i] == '{' && i + 2 < tmpl.size() && tmpl[i + 2] == '}') {
        char c = tmpl[i + 1];
        if (c == 'f') {
          if (single) out += 'f';
        } else {
          size_t k = static_cast<size_t>(c - '0');
          FUSERC_CHECK(k < v.operands.size(), std::string("op template of ") + info.name);
          out += print(v.operands[k]);
        }
        i += 2;
      } else {
        out += tmpl[i];
      }
    }
    return out;
  }

  // The contract's conversions (HostTensor's store rules).
  static std::string convert(const std::string& x, DType from, DType to) {
    ComputeType cf = compute_type(from);
    switch (to) {
      case DType::Bool: return cf == ComputeType::Bool ? x : "(" + x + " != 0)";
      case DType::F16:
      case DType::BF16: {
        std::string f = cf == ComputeType::F32 ? x : "(float)" + x;
        return to == DType::F16 ? "__half2float(__float2half_rn(" + f + "))"
                                : "__bfloat162float(__float2bfloat16_rn(" + f + "))";
      }
      case DType::F32: return cf == ComputeType::F32 ? x : "(float)" + x;
      case DType::F64: return cf == ComputeType::F64 ? x : "(double)" + x;
      case DType::I32:
        if (cf == ComputeType::F32) return "__float2int_rz(" + x + ")";
        if (cf == ComputeType::F64) return "__double2int_rz(" + x + ")";
        return from == DType::I32 ? x : "(int)" + x;
      case DType::I64:
        if (cf == ComputeType::F32) return "__float2ll_rz(" + x + ")";
        if (cf == ComputeType::F64) return "__double2ll_rz(" + x + ")";
        return from == DType::I64 ? x : "(long long)" + x;
    }
    FUSERC_UNREACHABLE("bad dtype");
  }
};

// `(x)` as `x` when the parentheses enclose all of it (for if conditions).
std::string without_outer_parens(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0) return s;  // the first group closes before the end
  }
  return s.substr(1, s.size() - 2);
}

// ---------------------------------------------------------------- statements

class StmtPrinter {
 public:
  explicit StmtPrinter(kir::Type index_type, const std::string& block_x = {},
                       const std::map<std::string, std::string>* spelled = nullptr)
      : values_(index_type, block_x, spelled), index_(index_type, block_x, spelled) {}

  void block(const kir::Block& b, int depth, std::ostringstream& out) const {
    for (const auto& s : b) stmt(s, depth, out);
  }

 private:
  ValuePrinter values_;
  IndexPrinter index_;

  static std::string vec_type(DType dtype, int width) {
    return std::string("fz_vec<") + c_type(kir::storage_type_of(dtype)) + ", " +
           std::to_string(width) + ">";
  }

  void stmt(const kir::Stmt& s, int depth, std::ostringstream& out) const {
    std::string pad(depth * 2, ' ');
    using K = kir::Stmt::Kind;
    switch (s.kind) {
      case K::Let:
        out << pad << (s.maybe_unused ? "[[maybe_unused]] " : "") << "const " << c_type(s.type) << " " << s.name << " = " << values_.print(s.value)
            << ";\n";
        break;
      case K::Declare:
        out << pad << c_type(s.type) << " " << s.name
            << (s.value ? " = " + values_.print(s.value) : std::string()) << ";\n";
        break;
      case K::Assign: out << pad << s.name << " = " << values_.print(s.value) << ";\n"; break;
      case K::Store:
        out << pad << s.buffer << "[" << index_.print(s.index)
            << "] = " << ValuePrinter::to_storage(values_.print(s.value), s.dtype) << ";\n";
        break;
      case K::VecDeclare: out << pad << vec_type(s.dtype, s.width) << " " << s.name << ";\n"; break;
      case K::VecLoad:
        if (s.cond) {
          out << pad << "const " << vec_type(s.dtype, s.width) << " " << s.name
              << " = fz_vec_load_if<" << s.width << ">("
              << without_outer_parens(values_.print(s.cond)) << ", " << s.buffer << ", "
              << index_.print(s.index) << ");\n";
          break;
        }
        out << pad << "const " << vec_type(s.dtype, s.width) << " " << s.name
            << " = *reinterpret_cast<const " << vec_type(s.dtype, s.width) << "*>(" << s.buffer
            << " + " << index_.print(s.index, kAdd + 1) << ");\n";
        break;
      case K::VecStore:
        out << pad << "*reinterpret_cast<" << vec_type(s.dtype, s.width) << "*>(" << s.buffer
            << " + " << index_.print(s.index, kAdd + 1) << ") = " << s.name << ";\n";
        break;
      case K::LaneStore:
        out << pad << s.name << ".v[" << index_.print(s.index)
            << "] = " << ValuePrinter::to_storage(values_.print(s.value), s.dtype) << ";\n";
        break;
      case K::If: {
        std::string cond = without_outer_parens(values_.print(s.cond));
        if (s.orelse.empty() && s.body.size() == 1 &&
            (s.body[0].kind == K::Return || s.body[0].kind == K::Continue)) {
          out << pad << "if (" << cond << ") "
              << (s.body[0].kind == K::Return ? "return" : "continue") << ";\n";
          break;
        }
        out << pad << "if (" << cond << ") {\n";
        block(s.body, depth + 1, out);
        if (!s.orelse.empty()) {
          out << pad << "} else {\n";
          block(s.orelse, depth + 1, out);
        }
        out << pad << "}\n";
        break;
      }
      case K::For:
        if (s.unroll) out << pad << "#pragma unroll\n";
        if (s.rolled) out << pad << "#pragma unroll 1\n";
        out << pad << "for (" << c_type(s.type) << " " << s.name << " = " << index_.print(s.begin)
            << "; " << s.name << " < " << index_.print(s.end, kAdd) << "; "
            << (s.step.is_const(1) ? "++" + s.name : s.name + " += " + index_.print(s.step))
            << ") {\n";
        block(s.body, depth + 1, out);
        out << pad << "}\n";
        break;
      case K::Array:
        out << pad << c_type(s.type) << " " << s.name << "[" << s.width << "];\n";
        break;
      case K::Shared:
        out << pad << "__shared__ " << c_type(s.type) << " " << s.name << "[" << s.width << "];\n";
        break;
      case K::ElementStore:
        out << pad << s.name << "[" << index_.print(s.index) << "] = " << values_.print(s.value)
            << ";\n";
        break;
      case K::Continue: out << pad << "continue;\n"; break;
      case K::Eval: out << pad << values_.print(s.value) << ";\n"; break;
      case K::Return: out << pad << "return;\n"; break;
      case K::Comment: out << pad << "// " << s.text << "\n"; break;
    }
  }
};

}  // namespace

namespace {

// The signature's parameters, one per line when they do not fit on one.
void print_signature(std::ostream& out, const std::string& head,
                     const std::vector<std::string>& params) {
  size_t total = head.size();
  for (const auto& p : params) total += p.size() + 2;
  out << head;
  for (size_t i = 0; i < params.size(); ++i) {
    if (total > 100)
      out << (i ? ",\n    " : "\n    ") << params[i];
    else
      out << (i ? ", " : "") << params[i];
  }
  out << ") {\n";
}

std::vector<std::string> param_list(const kir::Kernel& k) {
  std::vector<std::string> params;
  for (const auto& p : k.params) params.push_back(param_c_type(p) + " " + p.name);
  return params;
}

// The names a kernel declares: its parameters and every local of its body.
void declared_names(const kir::Block& b, std::set<std::string>& out) {
  using K = kir::Stmt::Kind;
  for (const auto& st : b) {
    switch (st.kind) {
      case K::Let:
      case K::Declare:
      case K::VecDeclare:
      case K::VecLoad:
      case K::Array:
      case K::Shared:
      case K::For: out.insert(st.name); break;
      default: break;
    }
    declared_names(st.body, out);
    declared_names(st.orelse, out);
  }
}

// `text` with every name in `names` replaced by n0_, n1_, ... in order of first appearance:
// two members that differ only in their names (an optimizer's parameters of one shape) print
// the same text. Numbers (1.0e-5f), members (threadIdx.x, vec.v), qualified names,
// preprocessor lines (#pragma unroll) and comments are left alone.
std::string canonical_names(const std::string& text, const std::set<std::string>& names) {
  std::map<std::string, std::string> renamed;
  std::string out;
  out.reserve(text.size());
  auto ident_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '#' || text.compare(i, 2, "//") == 0) {
      // A preprocessor line (#pragma unroll) or a comment: as it is, to the end of the line.
      size_t end = text.find('\n', i);
      end = end == std::string::npos ? text.size() : end;
      out.append(text, i, end - i);
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i + 1;
      while (j < text.size() && (ident_char(text[j]) || text[j] == '.' ||
                                 ((text[j] == '-' || text[j] == '+') &&
                                  (text[j - 1] == 'e' || text[j - 1] == 'E'))))
        ++j;
      out.append(text, i, j - i);
      i = j;
    } else if (ident_char(c)) {
      size_t j = i + 1;
      while (j < text.size() && ident_char(text[j])) ++j;
      std::string word = text.substr(i, j - i);
      // A member (threadIdx.x, a vector's .v) or a qualified name is not one of the names.
      bool member = i > 0 && (text[i - 1] == '.' ||
                              (i > 1 && text.compare(i - 2, 2, "->") == 0) ||
                              (i > 1 && text.compare(i - 2, 2, "::") == 0));
      if (names.count(word) && !member) {
        auto it = renamed.find(word);
        if (it == renamed.end())
          it = renamed.emplace(word, "n" + std::to_string(renamed.size()) + "_").first;
        out += it->second;
      } else {
        out += word;
      }
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string member_function(const kir::Kernel& k, const std::string& name) {
  std::set<std::string> names;
  for (const auto& p : k.params) names.insert(p.name);
  declared_names(k.body, names);
  names.erase(name);
  // The block index's parameter: kBlockParam, unless a value or symbol of the graph took it.
  std::string block = kBlockParam;
  while (names.count(block)) block += "_";
  std::ostringstream out;
  std::vector<std::string> params = param_list(k);
  params.push_back("const unsigned int " + block);
  print_signature(out,
                  std::string("static __device__ ") +
                      (k.called_often ? "__noinline__" : "__forceinline__") + " void " + name + "(",
                  params);
  // The member reads its range's block index from its parameter, not the built-in.
  StmtPrinter(k.index_type, block, &k.symbol_spelling).block(k.body, 1, out);
  out << "}\n";
  std::string text = out.str();
  FUSERC_CHECK(text.find("blockIdx") == std::string::npos,
               "member function " + name + " reads blockIdx other than as blockIdx.x");
  return canonical_names(text, names);
}

namespace {

std::string emit_callee(const kir::Kernel& k) {
  std::ostringstream out;
  for (const auto& line : k.header_comment) out << "// " << line << "\n";
  out << member_function(k, k.name) << "\n";
  return out.str();
}

}  // namespace

std::string emit_kernel(const kir::Kernel& k) {
  std::ostringstream out;
  for (const auto& c : k.callees) out << emit_callee(c);
  for (const auto& line : k.header_comment) out << "// " << line << "\n";
  print_signature(out,
                  "extern \"C\" __global__ void __launch_bounds__(" +
                      std::to_string(k.max_threads) + ") " + k.name + "(",
                  param_list(k));
  StmtPrinter(k.index_type, {}, &k.symbol_spelling).block(k.body, 1, out);
  out << "}\n";
  return out.str();
}

std::string emit_source(const kir::Kernel& kernel) {
  return preamble() + "\n" + emit_kernel(kernel);
}

}  // namespace fuserc::cuda
