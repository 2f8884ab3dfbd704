#include "core/ir/fusion.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "core/base/diagnostics.h"

namespace fuserc {

// ---------------------------------------------------------------- Literal

Literal Literal::of_bool(bool v) {
  Literal l;
  l.kind = Kind::Bool;
  l.b = v;
  return l;
}
Literal Literal::of_int(int64_t v) {
  Literal l;
  l.kind = Kind::Int;
  l.i = v;
  return l;
}
Literal Literal::of_float(double v) {
  Literal l;
  l.kind = Kind::Float;
  l.f = v;
  return l;
}

Literal Literal::of_size(const Expr& e, int32_t index) {
  Literal l;
  l.kind = Kind::Size;
  l.size = e;
  l.size_index = index;
  return l;
}

Literal Literal::with_size_value(int64_t value) const {
  return kind == Kind::Size ? of_int(value) : *this;
}

std::string size_param_name(int32_t index) {
  return "fz_size" + std::to_string(index);
}

DType Literal::dtype() const {
  switch (kind) {
    case Kind::Bool: return DType::Bool;
    case Kind::Int:
    case Kind::Size: return DType::I64;
    case Kind::Float: return DType::F32;
  }
  FUSERC_UNREACHABLE("bad literal kind");
}

double Literal::as_double() const {
  switch (kind) {
    case Kind::Bool: return b ? 1.0 : 0.0;
    case Kind::Int: return static_cast<double>(i);
    case Kind::Float: return f;
    case Kind::Size: break;
  }
  FUSERC_UNREACHABLE("the value of a size literal is read before binding");
}

int64_t Literal::as_int() const {
  switch (kind) {
    case Kind::Bool: return b ? 1 : 0;
    case Kind::Int: return i;
    case Kind::Float: {
      if (std::isnan(f)) return 0;
      if (f >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
      if (f <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(f);
    }
    case Kind::Size: break;
  }
  FUSERC_UNREACHABLE("the value of a size literal is read before binding");
}

bool Literal::as_bool() const {
  switch (kind) {
    case Kind::Bool: return b;
    case Kind::Int: return i != 0;
    case Kind::Float: return f != 0;
    case Kind::Size: break;
  }
  FUSERC_UNREACHABLE("the value of a size literal is read before binding");
}

std::string Literal::str() const {
  switch (kind) {
    case Kind::Bool: return b ? "true" : "false";
    case Kind::Int: return std::to_string(i);
    case Kind::Float: {
      char buf[40];
      auto r = std::to_chars(buf, buf + sizeof buf, f);  // shortest round-trip form
      std::string s(buf, r.ptr);
      if (s.find_first_of(".eni") == std::string::npos) s += ".0";
      return s;
    }
    case Kind::Size: return "size(" + size.str() + ")";
  }
  FUSERC_UNREACHABLE("bad literal kind");
}

bool Literal::operator==(const Literal& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::Bool: return b == o.b;
    case Kind::Int: return i == o.i;
    case Kind::Float: return f == o.f || (std::isnan(f) && std::isnan(o.f));
    case Kind::Size: return size == o.size;
  }
  return false;
}

// ---------------------------------------------------------------- Fusion

const Value& Fusion::value(ValueId id) const {
  FUSERC_CHECK(id >= 0 && static_cast<size_t>(id) < values.size(),
               "bad value id " + std::to_string(id));
  return values[id];
}

Value& Fusion::value(ValueId id) {
  FUSERC_CHECK(id >= 0 && static_cast<size_t>(id) < values.size(),
               "bad value id " + std::to_string(id));
  return values[id];
}

std::optional<ValueId> Fusion::find_value(const std::string& n) const {
  // (A vector that shrank or a stale entry means the values were replaced: index them anew.)
  auto stale = [&] {
    auto it = name_index_.find(n);
    return indexed_ > values.size() ||
           (it != name_index_.end() &&
            (static_cast<size_t>(it->second) >= values.size() || values[it->second].name != n));
  };
  if (stale()) {
    name_index_.clear();
    indexed_ = 0;
  }
  for (; indexed_ < values.size(); ++indexed_)
    name_index_.emplace(values[indexed_].name, static_cast<ValueId>(indexed_));
  auto it = name_index_.find(n);
  if (it == name_index_.end()) return std::nullopt;
  return it->second;
}

Literal Fusion::size_literal(const Expr& e) {
  FUSERC_CHECK(!e.is_const(), "a size literal of a constant: " + e.str());
  auto [it, fresh] = size_index_.emplace(e, static_cast<int32_t>(size_literals_.size()));
  if (fresh) size_literals_.push_back(e);
  return Literal::of_size(e, it->second);
}

const SymbolDecl* Fusion::find_symbol(const std::string& n) const {
  for (const auto& s : symbols)
    if (s.name == n) return &s;
  return nullptr;
}

ValueId Fusion::add_value(Value v) {
  values.push_back(std::move(v));
  return static_cast<ValueId>(values.size() - 1);
}

const Op* Fusion::producer(ValueId id) const {
  int d = value(id).def_op;
  return d >= 0 ? &ops[d] : nullptr;
}

std::vector<int> Fusion::consumers(ValueId id) const {
  std::vector<int> out;
  for (size_t k = 0; k < ops.size(); ++k) {
    for (const auto& a : ops[k].args) {
      if (a.value == id) {
        out.push_back(static_cast<int>(k));
        break;
      }
    }
  }
  return out;
}

bool Fusion::is_output(ValueId id) const {
  for (ValueId o : outputs)
    if (o == id) return true;
  return false;
}

ValueId Fusion::updated_value(ValueId id) const {
  for (const auto& [out, in] : aliases)
    if (in == id) return out;
  return id;
}

std::string shape_to_string(const std::vector<Expr>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].str();
  }
  return s + "]";
}

namespace {

std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string attrs_to_string(const Fusion& f, const Op& op) {
  const OpAttrs& a = op.attrs;
  std::ostringstream s;
  switch (op.info().group) {
    case OpGroup::Reduction:
      s << " dims=" << ints_to_string(a.dims);
      if (a.keepdim) s << " keepdim";
      if (op.kind == OpKind::Var || op.kind == OpKind::VarMean) s << " correction=" << a.correction;
      break;
    case OpGroup::Cast: s << " dtype=" << dtype_name(*a.dtype); break;
    case OpGroup::Unary:
      if (op.kind == OpKind::GeluTanh) s << " approximate=tanh";
      break;
    case OpGroup::Shape:
      switch (op.kind) {
        case OpKind::BroadcastInDim:
          s << " broadcast_dims=" << ints_to_string(a.broadcast_dims);
          break;
        case OpKind::Permute: s << " dims=" << ints_to_string(a.dims); break;
        case OpKind::Squeeze: s << " dims=" << ints_to_string(a.dims); break;
        case OpKind::Unsqueeze:
        case OpKind::Cat:
        case OpKind::IndexSelect:
        case OpKind::Gather: s << " dim=" << a.dim; break;
        case OpKind::Matmul:
        case OpKind::Linear: {
          static const char* kAct[] = {"", " activation=relu", " activation=gelu",
                                       " activation=gelu_tanh"};
          s << kAct[static_cast<int>(a.activation)] << (a.allow_tf32 ? " allow_tf32" : "");
          for (size_t i = 0; i < a.views.size(); ++i)
            if (a.views[i].active())
              s << " view" << i << "=[" << a.views[i].views << " " << shape_to_string(a.views[i].shape)
                << " strides " << shape_to_string(a.views[i].memory) << "]";
          break;
        }
        case OpKind::Slice:
          s << " starts=" << shape_to_string(a.starts) << " steps=" << shape_to_string(a.steps);
          break;
        case OpKind::Pad: {
          s << " pads=[";
          for (size_t i = 0; i < a.pads.size(); ++i)
            s << (i ? ", " : "") << "[" << a.pads[i].first.str() << ", " << a.pads[i].second.str()
              << "]";
          s << "] value=" << a.value.str();
          break;
        }
        default: break;
      }
      break;
    case OpGroup::Creation:
      if (op.kind == OpKind::Full) s << " value=" << a.value.str();
      if (op.kind == OpKind::Iota) s << " start=" << a.start.str() << " step=" << a.step.str();
      break;
    default: break;
  }
  (void)f;
  return s.str();
}

}  // namespace

std::vector<int> interface_indices(const Fusion& f) {
  std::vector<int> out;
  int passed = 0, constants = 0;
  for (ValueId id : f.inputs) out.push_back(f.value(id).is_constant() ? constants++ : passed++);
  return out;
}

std::string Fusion::to_text() const {
  std::ostringstream s;
  s << "fusion " << name << "\n";
  for (const auto& sym : symbols)
    s << "  symbol " << sym.name << " in [" << sym.min << ", " << sym.max << "] hint " << sym.hint
      << "\n";
  auto type_of = [&](ValueId id) {
    const Value& v = value(id);
    return std::string(dtype_name(v.dtype)) + shape_to_string(v.shape);
  };
  for (ValueId id : inputs) {
    const Value& v = value(id);
    s << "  input " << v.name << ": " << type_of(id);
    if (v.scalar_input) s << " scalar";
    if (!v.sets_symbol.empty()) s << " sets " << v.sets_symbol;
    if (v.is_constant()) s << " constant (" << v.constant->source() << ")";
    if (!v.strides.empty()) s << " strides " << shape_to_string(v.strides);
    s << "\n";
  }
  for (const auto& op : ops) {
    s << "  ";
    for (size_t i = 0; i < op.outs.size(); ++i)
      s << (i ? ", " : "") << value(op.outs[i]).name << ": " << type_of(op.outs[i]);
    // Internal forms are shown as the graph wrote them.
    s << " = " << (op.kind == OpKind::GeluTanh ? "gelu" : op_name(op.kind)) << "(";
    for (size_t i = 0; i < op.args.size(); ++i) {
      s << (i ? ", " : "");
      s << (op.args[i].is_literal() ? op.args[i].literal.str() : value(op.args[i].value).name);
    }
    s << ")" << attrs_to_string(*this, op) << "\n";
  }
  s << "  outputs";
  for (ValueId o : outputs) s << " " << value(o).name;
  s << "\n";
  for (const auto& [out, in] : aliases)
    s << "  alias " << value(out).name << " -> " << value(in).name << "\n";
  return s.str();
}

}  // namespace fuserc
