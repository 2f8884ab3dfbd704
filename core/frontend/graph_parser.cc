// Reading the graph document: top-level keys, symbols, inputs, outputs, aliases.
#include "core/frontend/graph_parser.h"

#include <algorithm>
#include <filesystem>
#include <limits>

#include "core/base/diagnostics.h"
#include "core/base/text_util.h"
#include "core/expr/expr_parse.h"
#include "core/frontend/graph_reader.h"
#include "core/frontend/symbol_binding.h"
#include "core/ir/element_access.h"

namespace fuserc {

namespace {
const std::vector<std::string> kTopKeys = {"fuserc", "name",    "symbols", "inputs",
                                           "ops",    "outputs", "aliases"};
constexpr int64_t kDefaultHint = 1024;
}  // namespace

// ---------------------------------------------------------------- errors

void GraphReader::fail(const std::string& path, const std::string& message) const {
  if (cur_op_) fail_op(cur_op_index_, *cur_op_, path, message);
  throw UserError(doc_.place(path), path + ": " + message);
}

namespace {

// "op 3 'add' (out 'z')": how messages name an op.
std::string op_who(int k, const Json& op) {
  std::string who = "op " + std::to_string(k);
  if (op.is_object()) {
    auto it = op.find("op");
    if (it != op.end() && it->is_string()) who += " " + quote(it->get<std::string>());
    auto out = op.find("out");
    if (out != op.end()) {
      if (out->is_string()) {
        who += " (out " + quote(out->get<std::string>()) + ")";
      } else if (out->is_array() && !out->empty() && (*out)[0].is_string()) {
        std::vector<std::string> names;
        for (const auto& n : *out)
          if (n.is_string()) names.push_back(quote(n.get<std::string>()));
        who += " (out " + join(names) + ")";
      }
    }
  }
  return who;
}

}  // namespace

void GraphReader::fail_op(int k, const Json& op, const std::string& path,
                          const std::string& message) const {
  throw UserError(doc_.place(path), op_who(k, op) + " at " + path + ": " + message);
}

// ---------------------------------------------------------------- typed access

void GraphReader::check_keys(const Json& obj, const std::string& path,
                             const std::vector<std::string>& allowed,
                             const std::string& what) const {
  for (const auto& [key, v] : obj.items()) {
    (void)v;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(json_path_member(path, key), "unknown key " + quote(key) + " in " + what +
                                            did_you_mean(key, allowed) +
                                            "; allowed keys: " + join(allowed));
  }
}

const Json& GraphReader::require(const Json& obj, const std::string& path, const std::string& key,
                                 const std::string& what) const {
  auto it = obj.find(key);
  if (it == obj.end()) fail(path, what + " is missing the required key '" + key + "'");
  return *it;
}

int64_t GraphReader::read_int(const Json& j, const std::string& path,
                              const std::string& what) const {
  if (!j.is_number_integer())
    fail(path, what + " must be an integer, got " + j.dump(-1, ' ', true).substr(0, 40));
  return j.get<int64_t>();
}

std::string GraphReader::read_string(const Json& j, const std::string& path,
                                     const std::string& what) const {
  if (!j.is_string())
    fail(path, what + " must be a string, got " + j.dump(-1, ' ', true).substr(0, 40));
  return j.get<std::string>();
}

std::string name_length_message(const std::string& name, const std::string& what) {
  return what + " " + quote(name) + " is " + std::to_string(name.size()) +
         " characters long; the limit is " + std::to_string(kMaxNameLength);
}

void GraphReader::check_name_length(const std::string& name, const std::string& path,
                                    const std::string& what) const {
  if (name.size() > kMaxNameLength) fail(path, name_length_message(name, what));
}

std::string GraphReader::read_identifier(const Json& j, const std::string& path,
                                         const std::string& what) const {
  std::string s = read_string(j, path, what);
  if (!is_identifier(s))
    fail(path, what + " " + quote(s) + " is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  check_name_length(s, path, what);
  return s;
}

const Json& GraphReader::read_array(const Json& j, const std::string& path,
                                    const std::string& what) const {
  if (!j.is_array())
    fail(path, what + " must be a list, got " + j.dump(-1, ' ', true).substr(0, 40));
  return j;
}

DType GraphReader::read_dtype(const Json& j, const std::string& path) const {
  std::string s = read_string(j, path, "a dtype");
  auto d = parse_dtype(s);
  if (!d) {
    std::vector<std::string> names;
    for (int i = 0; i < kNumDTypes; ++i) names.push_back(dtype_name(static_cast<DType>(i)));
    fail(path,
         "unknown dtype " + quote(s) + did_you_mean(s, names) + "; expected one of " + join(names));
  }
  return *d;
}

Literal GraphReader::read_literal(const Json& j, const std::string& path,
                                  const std::string& what) const {
  if (j.is_boolean()) return Literal::of_bool(j.get<bool>());
  if (j.is_number_integer()) return Literal::of_int(j.get<int64_t>());
  if (j.is_number_float()) return Literal::of_float(j.get<double>());
  fail(path, what + " must be a number or true/false, got " + j.dump(-1, ' ', true).substr(0, 40));
}

Literal GraphReader::read_number(const Json& j, const std::string& path,
                                 const std::string& what) const {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "inf") return Literal::of_float(std::numeric_limits<double>::infinity());
    if (s == "-inf") return Literal::of_float(-std::numeric_limits<double>::infinity());
    if (s == "nan") return Literal::of_float(std::numeric_limits<double>::quiet_NaN());
  }
  if (j.is_boolean() || j.is_number()) return read_literal(j, path, what);
  fail(path,
       what + R"( must be a number, true/false, or one of the strings "inf", "-inf", "nan", got )" +
           j.dump(-1, ' ', true).substr(0, 40));
}

Expr GraphReader::symbol_expr(const std::string& name, const std::string& path, ExtentUse use) {
  auto it = symbol_index_.find(name);
  if (use == ExtentUse::InputShape) {
    if (it == symbol_index_.end()) {
      SymbolDecl s;
      s.name = name;
      s.min = 1;
      s.max = kMaxExtent;
      s.hint = kDefaultHint;
      s.expr = Expr::symbol(name, s.min, s.max);
      s.declared = false;
      symbol_index_[name] = static_cast<int>(f_.symbols.size());
      f_.symbols.push_back(s);
      return s.expr;
    }
    return f_.symbols[it->second].expr;
  }
  FUSERC_CHECK(bindings_planned_, "an extent outside the input shapes read before binding");
  if (!bound_symbols_.count(name)) {
    std::vector<std::string> known(bound_symbols_.begin(), bound_symbols_.end());
    fail(path, "symbol " + quote(name) + " is bound by no input" + did_you_mean(name, known) +
                   ", so its value cannot be known at run time (a symbol is bound by an input "
                   "extent that is the symbol, or k*S+c, or by a scalar input with \"symbol\")");
  }
  return f_.symbols[it->second].expr;
}

Expr GraphReader::read_extent_expr(const std::string& text, const std::string& path,
                                   ExtentUse use, const std::string& what) {
  std::string noun = what == "a slice bound" ? "slice bound" : what;
  // Symbols resolve as plain symbol extents do; errors are placed at the offending byte.
  std::string symbol_error;
  auto resolve = [&](const std::string& name) -> std::optional<Expr> {
    if (name.size() > kMaxNameLength) {
      symbol_error = name_length_message(name, "symbol name");
      return std::nullopt;
    }
    if (use == ExtentUse::InputShape) return symbol_expr(name, path, use);
    if (!bound_symbols_.count(name) || !symbol_index_.count(name)) return std::nullopt;
    return f_.symbols[symbol_index_.at(name)].expr;
  };
  auto hint = [&](const std::string& name) {
    if (!symbol_error.empty()) return ": " + symbol_error;
    std::vector<std::string> known(bound_symbols_.begin(), bound_symbols_.end());
    if (symbol_index_.count(name))
      return std::string(" (declared, but bound by no input)");
    return did_you_mean(name, known);
  };
  ExprParseError err;
  std::optional<Expr> e = parse_extent_expr(text, resolve, &err, hint);
  if (!e) {
    // Placed at the offending byte (past the opening quote; exact unless the string has
    // escapes, which no valid expression has).
    SourcePlace place = doc_.place(path);
    if (place.col > 0) place.col += 1 + static_cast<int>(err.offset);
    throw UserError(place, (cur_op_ ? op_who(cur_op_index_, *cur_op_) + " at " : std::string()) +
                               path + ": " + noun + " " + quote(text) + ": " + err.message);
  }
  std::string witness;
  if (can_be_negative(*e, &witness))
    fail(path, noun + " " + quote(text) + " can be negative" +
                   (witness.empty() ? " for some values of its symbols in their ranges"
                                    : " (" + witness + ")") +
                   "; an extent expression must be at least 0 for every binding");
  return *e;
}

Literal GraphReader::read_size_literal(const Json& j, const std::string& path) {
  if (j.size() != 1)
    fail(path, R"(a size literal {"size": E} takes no other key, got )" +
                   j.dump(-1, ' ', true).substr(0, 40));
  const Json& e = j["size"];
  std::string p = path + ".size";
  Expr x;
  if (e.is_number_integer()) {
    x = read_extent(e, p, ExtentUse::OpAttribute, false, true, "size");
  } else if (e.is_string()) {
    const std::string text = e.get<std::string>();
    x = is_identifier(text) ? symbol_expr(text, p, ExtentUse::OpAttribute)
                            : read_extent_expr(text, p, ExtentUse::OpAttribute, "size");
  } else {
    fail(p, "a size must be an extent: an integer, a symbol or an extent expression, got " +
                e.dump(-1, ' ', true).substr(0, 40));
  }
  if (x.is_const()) return Literal::of_int(x.value());  // nothing to read at run time
  return f_.size_literal(x);
}

Expr GraphReader::read_extent(const Json& j, const std::string& path, ExtentUse use,
                              bool allow_minus_one, bool allow_zero, const std::string& what) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (!is_identifier(s)) return read_extent_expr(s, path, use, what);
    check_name_length(s, path, "symbol name");
    return symbol_expr(s, path, use);
  }
  if (!j.is_number_integer())
    fail(path, (what == "extent"          ? "an extent"
                : what == "a slice bound" ? what
                                          : "a " + what) +
                   " must be an integer, a symbol name or an extent expression, got " +
                   j.dump(-1, ' ', true).substr(0, 40));
  int64_t v = j.get<int64_t>();
  std::string noun = what == "a slice bound" ? "slice bound" : what;
  if (v == -1 && allow_minus_one) return Expr(-1);
  if (v < 0 || (v == 0 && !allow_zero))
    fail(path, noun + " " + std::to_string(v) + " must be " +
                   (allow_zero ? "non-negative" : "positive") +
                   (allow_minus_one ? " (or -1)" : ""));
  if (v > kMaxExtent) fail(path, noun + " " + std::to_string(v) + " is not below 2^62");
  return Expr(v);
}

void GraphReader::check_new_name(const std::string& name, const std::string& path, int op_k,
                                 const Json* op) const {
  if (auto existing = f_.find_value(name)) {
    const Value& v = f_.value(*existing);
    std::string by = v.is_input() ? "input " + std::to_string(v.input_index)
                                  : "op " + std::to_string(f_.ops[v.def_op].source_index);
    std::string msg = "name " + quote(name) + " is already defined (by " + by + ")";
    if (op) fail_op(op_k, *op, path, msg);
    fail(path, msg);
  }
}

// ---------------------------------------------------------------- document parts

void GraphReader::read_symbols(const Json& j) {
  const std::string path = "$.symbols";
  if (!j.is_object()) fail(path, "symbols must be an object {name: {hint, min, max}}");
  if (j.size() > kMaxSymbols)
    fail(path, "has " + std::to_string(j.size()) + " symbols; the limit is " +
                   std::to_string(kMaxSymbols));
  for (const auto& [name, spec] : j.items()) {
    std::string p = json_path_member(path, name);
    if (!is_identifier(name))
      fail(p, "symbol name " + quote(name) + " is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    check_name_length(name, p, "symbol name");
    if (!spec.is_object()) fail(p, "a symbol must be an object {hint, min, max}");
    check_keys(spec, p, {"hint", "min", "max"}, "symbol " + quote(name));
    SymbolDecl s;
    s.name = name;
    s.min = spec.contains("min") ? read_int(spec["min"], p + ".min", "min") : 1;
    s.max = spec.contains("max") ? read_int(spec["max"], p + ".max", "max") : kMaxExtent;
    if (s.min < 0) fail(p + ".min", "min must not be negative");
    if (s.min > kMaxExtent) fail(p + ".min", "min must be below 2^62");
    if (s.max > kMaxExtent) fail(p + ".max", "max must be below 2^62");
    if (s.max < s.min)
      fail(p + ".max", "max " + std::to_string(s.max) + " is below min " + std::to_string(s.min));
    s.hint = std::clamp(kDefaultHint, s.min, s.max);
    if (spec.contains("hint")) {
      s.hint = read_int(spec["hint"], p + ".hint", "hint");
      if (s.hint < s.min || s.hint > s.max)
        fail(p + ".hint", "hint " + std::to_string(s.hint) + " is outside [min, max] = [" +
                              std::to_string(s.min) + ", " + std::to_string(s.max) + "]");
    }
    s.expr = Expr::symbol(name, s.min, s.max);
    symbol_index_[name] = static_cast<int>(f_.symbols.size());
    f_.symbols.push_back(s);
  }
}

void GraphReader::read_inputs(const Json& j) {
  const std::string path = "$.inputs";
  read_array(j, path, "inputs");
  if (j.size() > kMaxInputs)
    fail(path,
         "has " + std::to_string(j.size()) + " inputs; the limit is " + std::to_string(kMaxInputs));
  for (size_t i = 0; i < j.size(); ++i) {
    std::string p = json_path_index(path, i);
    const Json& in = j[i];
    if (!in.is_object()) fail(p, "an input must be an object {name, dtype, shape}");
    check_keys(in, p, {"name", "dtype", "shape", "strides", "range", "symbol", "data"},
               "an input");
    Value v;
    v.name = read_identifier(require(in, p, "name", "an input"), p + ".name", "input name");
    check_new_name(v.name, p + ".name", -1, nullptr);
    v.dtype = read_dtype(require(in, p, "dtype", "input " + quote(v.name)), p + ".dtype");
    v.input_index = static_cast<int>(i);
    if (in.contains("shape")) {
      const Json& shape = read_array(in["shape"], p + ".shape", "shape");
      if (shape.size() > kMaxRank)
        fail(p + ".shape", "input " + quote(v.name) + " has rank " + std::to_string(shape.size()) +
                               "; the limit is " + std::to_string(kMaxRank));
      for (size_t d = 0; d < shape.size(); ++d) {
        std::string pd = json_path_index(p + ".shape", d);
        if (in.contains("data") && !shape[d].is_number_integer())
          fail(pd, "constant " + quote(v.name) +
                       " has a symbolic extent; the shape of a constant is integers only");
        v.shape.push_back(read_extent(shape[d], pd, ExtentUse::InputShape, false, false));
      }
      if (!least_bytes_fit(v.shape, v.dtype))
        fail(p + ".shape",
             "the size in bytes of input " + quote(v.name) + " overflows 64-bit integers");
    } else {
      v.scalar_input = true;
      if (in.contains("strides")) fail(p + ".strides", "a scalar input (no shape) has no strides");
      if (in.contains("data"))
        fail(p + ".data", "a constant needs a shape (a single value is \"shape\": [])");
    }
    if (in.contains("symbol")) read_symbol_input(in, p, v);
    if (in.contains("data")) read_constant(in, p, v);
    if (in.contains("range")) {
      const Json& r = read_array(in["range"], p + ".range", "range");
      if (r.size() != 2) fail(p + ".range", "range must be [lo, hi]");
      double lo = read_literal(r[0], p + ".range[0]", "range").as_double();
      double hi = read_literal(r[1], p + ".range[1]", "range").as_double();
      if (lo > hi) fail(p + ".range", "range [lo, hi] has lo above hi");
      v.range = std::make_pair(lo, hi);
    }
    ValueId id = f_.add_value(std::move(v));
    f_.inputs.push_back(id);
  }
}

void GraphReader::read_symbol_input(const Json& in, const std::string& p, Value& v) {
  const std::string ps = p + ".symbol";
  if (!v.scalar_input)
    fail(ps, "input " + quote(v.name) +
                 " has a shape; only a scalar input (no shape) can set a symbol with its value");
  if (v.dtype != DType::I32 && v.dtype != DType::I64)
    fail(p + ".dtype", "scalar input " + quote(v.name) + " sets a symbol, so it must be i32 or "
                                                        "i64 (a size is an integer), got " +
                           dtype_name(v.dtype));
  std::string name = read_identifier(in["symbol"], ps, "symbol name");
  auto it = symbol_index_.find(name);
  if (it == symbol_index_.end()) {
    SymbolDecl s;
    s.name = name;
    s.min = 1;
    s.max = v.dtype == DType::I32 ? std::numeric_limits<int32_t>::max() : kMaxExtent;
    s.hint = std::clamp(kDefaultHint, s.min, s.max);
    s.expr = Expr::symbol(name, s.min, s.max);
    s.declared = false;
    symbol_index_[name] = static_cast<int>(f_.symbols.size());
    f_.symbols.push_back(s);
  }
  v.sets_symbol = name;
}

void GraphReader::plan_bindings() {
  std::optional<UnboundExtent> unbound;
  f_.bind_steps = plan_symbol_binding(f_, &unbound);
  for (const auto& s : f_.bind_steps) bound_symbols_.insert(s.symbol);
  bindings_planned_ = true;
  if (unbound) {
    const Value& v = f_.value(f_.inputs[unbound->input]);
    std::string p = json_path_index(json_path_index("$.inputs", unbound->input) + ".shape",
                                    unbound->dim);
    fail(p, "symbol " + quote(unbound->symbol) + " is bound by nothing: input " +
                quote(v.name) + " dimension " + std::to_string(unbound->dim) + " is " +
                v.shape[unbound->dim].str() +
                ", which cannot be solved for it, and no input extent is the symbol itself, "
                "k*" + unbound->symbol + "+c, or a scalar input with \"symbol\"");
  }
}

// Strides are read once every input shape is known, so that they may use any bound symbol.
void GraphReader::read_input_strides(const Json& j) {
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].contains("strides")) continue;
    std::string p = json_path_index("$.inputs", i) + ".strides";
    Value& v = f_.value(f_.inputs[i]);
    const Json& s = read_array(j[i]["strides"], p, "strides");
    if (s.size() != v.shape.size())
      fail(p, "has " + count_of(static_cast<int64_t>(s.size()), "entry", "entries") +
                  " but the shape has " + std::to_string(v.shape.size()));
    for (size_t d = 0; d < s.size(); ++d)
      v.strides.push_back(
          read_extent(s[d], json_path_index(p, d), ExtentUse::Stride, false, true, "stride"));
    if (!least_span_fits(v.shape, v.strides, v.dtype))
      fail(p, "the bytes input " + quote(v.name) + " spans through its strides overflow 64-bit "
              "integers");
  }
}

void GraphReader::prescan_op_names(const Json& ops) {
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k].is_object() || !ops[k].contains("out")) continue;
    const Json& out = ops[k]["out"];
    if (out.is_string()) future_names_.emplace(out.get<std::string>(), static_cast<int>(k));
    if (out.is_array())
      for (const auto& n : out)
        if (n.is_string()) future_names_.emplace(n.get<std::string>(), static_cast<int>(k));
  }
}

void GraphReader::read_outputs(const Json& j) {
  const std::string path = "$.outputs";
  read_array(j, path, "outputs");
  if (j.empty()) fail(path, "outputs is empty: a graph must produce at least one output");
  for (size_t i = 0; i < j.size(); ++i) {
    std::string p = json_path_index(path, i);
    std::string name = read_string(j[i], p, "an output");
    auto id = f_.find_value(name);
    if (!id) {
      std::vector<std::string> names;
      for (const auto& v : f_.values) names.push_back(v.name);
      fail(p, "output " + quote(name) + " is not defined by any input or op" +
                  did_you_mean(name, names));
    }
    f_.outputs.push_back(*id);
  }
}

void GraphReader::read_aliases(const Json& j) {
  const std::string path = "$.aliases";
  if (!j.is_object()) fail(path, "aliases must be an object {output: input}");
  std::set<ValueId> aliased_inputs;
  for (const auto& [out_name, in_json] : j.items()) {
    std::string p = json_path_member(path, out_name);
    auto out = f_.find_value(out_name);
    if (!out || !f_.is_output(*out))
      fail(p, "alias key " + quote(out_name) + " is not one of the outputs");
    if (f_.value(*out).is_input())
      fail(p, "output " + quote(out_name) + " is itself an input and cannot alias another input");
    std::string in_name = read_string(in_json, p, "an alias target");
    auto in = f_.find_value(in_name);
    if (!in || !f_.value(*in).is_input())
      fail(p, "alias target " + quote(in_name) + " is not an input");
    const Value& ov = f_.value(*out);
    const Value& iv = f_.value(*in);
    if (iv.scalar_input)
      fail(p, "alias target " + quote(in_name) + " is a scalar input; only tensors can be written");
    if (iv.is_constant())
      fail(p, "alias target " + quote(in_name) +
                  " is a constant (the package's values): it cannot be written in place");
    if (ov.dtype != iv.dtype)
      fail(p, "output " + quote(out_name) + " is " + dtype_name(ov.dtype) + " but input " +
                  quote(in_name) + " is " + dtype_name(iv.dtype) +
                  ": an alias needs the same dtype");
    if (ov.shape != iv.shape)
      fail(p, "output " + quote(out_name) + " has shape " + shape_to_string(ov.shape) +
                  " but input " + quote(in_name) + " has shape " + shape_to_string(iv.shape) +
                  ": an alias needs the same shape");
    if (!aliased_inputs.insert(*in).second)
      fail(p, "input " + quote(in_name) + " is the alias target of more than one output");
    if (elements_distinct(f_, iv).is_const(0))
      fail(p, "alias target " + quote(in_name) + " has strides " + shape_to_string(iv.strides) +
                  " under which elements of its shape " + shape_to_string(iv.shape) +
                  " share memory, so it cannot be written in place");
    f_.aliases.emplace_back(*out, *in);
  }
}

Fusion GraphReader::read() {
  const Json& root = doc_.root;
  if (!root.is_object()) fail("$", "a fusion graph must be a JSON object");
  check_keys(root, "$", kTopKeys, "the graph");
  const Json& version = require(root, "$", "fuserc", "the graph");
  if (!version.is_number_integer() || version.get<int64_t>() != 1)
    fail("$.fuserc", "unsupported format version " + version.dump(-1, ' ', true).substr(0, 20) +
                         " (this fuserc reads version 1)");
  f_.name = read_identifier(require(root, "$", "name", "the graph"), "$.name", "the graph name");
  f_.source_file = doc_.file;
  if (root.contains("symbols")) read_symbols(root["symbols"]);
  const Json& inputs = require(root, "$", "inputs", "the graph");
  const Json& ops = require(root, "$", "ops", "the graph");
  const Json& outputs = require(root, "$", "outputs", "the graph");
  read_inputs(inputs);
  plan_bindings();
  read_input_strides(inputs);
  read_array(ops, "$.ops", "ops");
  if (ops.size() > kMaxOps)
    fail("$.ops",
         "has " + std::to_string(ops.size()) + " ops; the limit is " + std::to_string(kMaxOps));
  prescan_op_names(ops);
  for (size_t k = 0; k < ops.size(); ++k) {
    cur_op_index_ = static_cast<int>(k);
    cur_op_ = &ops[k];
    read_op(static_cast<int>(k), ops[k]);
  }
  cur_op_ = nullptr;
  read_outputs(outputs);
  if (root.contains("aliases")) read_aliases(root["aliases"]);
  std::sort(f_.symbols.begin(), f_.symbols.end(),
            [](const SymbolDecl& a, const SymbolDecl& b) { return a.name < b.name; });
  return std::move(f_);
}

// ---------------------------------------------------------------- entry points

Fusion parse_fusion(const JsonDocument& doc) {
  return GraphReader(doc).read();
}

Fusion parse_fusion_file(const std::string& path) {
  JsonDocument doc = read_json_file(path);
  return parse_fusion(doc);
}

}  // namespace fuserc
