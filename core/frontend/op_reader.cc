// Reading one op of the graph: its kind, keys, results, arguments and attributes, then typing
// it with shape inference and defining its results.
#include <algorithm>
#include <cmath>

#include "core/base/diagnostics.h"
#include "core/base/text_util.h"
#include "core/frontend/attention.h"
#include "core/frontend/convolution.h"
#include "core/frontend/graph_parser.h"
#include "core/frontend/graph_reader.h"
#include "core/frontend/shape_inference.h"

namespace fuserc {

namespace {

std::vector<std::string> vocabulary() {
  std::vector<std::string> names;
  for (const auto& info : all_ops())
    if (!info.is_internal()) names.push_back(info.name);
  return names;
}

std::string args_count(int n) {
  return std::to_string(n) + (n == 1 ? " argument" : " arguments");
}

}  // namespace

Operand GraphReader::read_arg(int k, const Json& op, const Json& a, const std::string& path) {
  Operand o;
  if (a.is_string()) {
    std::string name = a.get<std::string>();
    if (auto id = f_.find_value(name)) {
      o.value = *id;
      return o;
    }
    auto later = future_names_.find(name);
    if (later != future_names_.end() && later->second >= k) {
      if (later->second == k)
        fail_op(k, op, path, "op uses its own result " + quote(name) + ": a cycle");
      fail_op(k, op, path,
              quote(name) + " is used before it is defined (by op " +
                  std::to_string(later->second) +
                  "); ops must be listed in dependency order and must not form a cycle");
    }
    std::vector<std::string> names;
    for (const auto& v : f_.values) names.push_back(v.name);
    fail_op(k, op, path, "unknown name " + quote(name) + did_you_mean(name, names));
  }
  if (a.is_boolean() || a.is_number()) {
    o.literal = read_literal(a, path, "an argument");
    return o;
  }
  // {"value": V}: a literal JSON cannot write as a number ("inf", "-inf", "nan"), or any number.
  if (a.is_object() && a.contains("value")) {
    if (a.size() != 1)
      fail_op(k, op, path,
              R"(a literal {"value": V} takes no other key, got )" +
                  a.dump(-1, ' ', true).substr(0, 40));
    o.literal = read_number(a["value"], path + ".value", "a literal's value");
    return o;
  }
  // {"size": E}: an integer literal whose value is the extent expression E at run time.
  if (a.is_object() && a.contains("size")) {
    o.literal = read_size_literal(a, path);
    return o;
  }
  fail_op(k, op, path,
          R"(an argument must be a name, a number literal, {"value": V} or {"size": E}, got )" +
              a.dump(-1, ' ', true).substr(0, 40));
}

void GraphReader::read_attr(int k, const Json& op, OpKind kind, const std::string& key,
                            const Json& v, const std::string& path, OpAttrs& a) {
  auto ints = [&](const char* what) {
    if (!v.is_array()) fail_op(k, op, path, std::string(what) + " must be a list of integers");
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_integer())
        fail_op(k, op, json_path_index(path, i), std::string(what) + " must hold integers");
      out.push_back(v[i].get<int64_t>());
    }
    return out;
  };
  auto integer = [&](const char* what) {
    if (!v.is_number_integer()) fail_op(k, op, path, std::string(what) + " must be an integer");
    return v.get<int64_t>();
  };
  auto extents = [&](bool allow_minus_one) {
    if (!v.is_array()) fail_op(k, op, path, "shape must be a list of extents");
    std::vector<Expr> out;
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(read_extent(v[i], json_path_index(path, i), ExtentUse::OpAttribute,
                                allow_minus_one, false));
    return out;
  };
  // Slice bounds: integers (negatives count from the end), symbols or extent expressions.
  auto bounds = [&]() {
    if (!v.is_array())
      fail_op(k, op, path, key + " must be a list of integers, symbols or extent expressions");
    std::vector<Expr> out;
    for (size_t i = 0; i < v.size(); ++i) {
      std::string p = json_path_index(path, i);
      if (v[i].is_number_integer()) {
        int64_t b = v[i].get<int64_t>();
        if (b < -kMaxExtent || b > kMaxExtent) fail_op(k, op, p, "slice bound out of range");
        out.push_back(Expr(b));
      } else {
        out.push_back(read_extent(v[i], p, ExtentUse::OpAttribute, false, false, "a slice bound"));
      }
    }
    return out;
  };

  if (key == "dims") {
    a.dims = ints("dims");
  } else if (key == "keepdim") {
    if (!v.is_boolean()) fail_op(k, op, path, "keepdim must be true or false");
    a.keepdim = v.get<bool>();
  } else if (key == "dtype") {
    a.dtype = read_dtype(v, path);
  } else if (key == "correction") {
    a.correction = integer("correction");
  } else if (key == "shape") {
    bool minus_one = kind == OpKind::Reshape || kind == OpKind::Expand;
    a.shape = extents(minus_one);
  } else if (key == "broadcast_dims") {
    a.broadcast_dims = ints("broadcast_dims");
  } else if (key == "starts") {
    a.starts = bounds();
  } else if (key == "ends") {
    a.ends = bounds();
  } else if (key == "steps") {
    if (!v.is_array())
      fail_op(k, op, path, "steps must be a list of positive integers, symbols or extent expressions");
    a.steps.clear();
    for (size_t i = 0; i < v.size(); ++i) {
      std::string p = json_path_index(path, i);
      if (v[i].is_number_integer()) {
        int64_t b = v[i].get<int64_t>();
        if (b < -kMaxExtent || b > kMaxExtent) fail_op(k, op, p, "slice step out of range");
        a.steps.push_back(Expr(b));
      } else if (v[i].is_string()) {
        a.steps.push_back(read_extent(v[i], p, ExtentUse::OpAttribute, false, true, "a slice step"));
      } else {
        fail_op(k, op, p, "a slice step must be a positive integer, a symbol or an extent expression");
      }
    }
  } else if (key == "pads") {
    if (!v.is_array()) fail_op(k, op, path, "pads must be a list of [lo, hi] pairs");
    for (size_t i = 0; i < v.size(); ++i) {
      std::string p = json_path_index(path, i);
      const Json& pair = v[i];
      if (!pair.is_array() || pair.size() != 2)
        fail_op(k, op, p, "each entry of pads must be a pair [lo, hi]");
      // An integer (negative crops) or an extent (a symbol or an expression, never negative).
      Expr ends[2];
      for (int h = 0; h < 2; ++h) {
        std::string ph = json_path_index(p, h);
        if (pair[h].is_number_integer()) {
          int64_t x = pair[h].get<int64_t>();
          if (x < -kMaxExtent || x > kMaxExtent) fail_op(k, op, ph, "pad amount out of range");
          ends[h] = Expr(x);
        } else if (pair[h].is_string()) {
          ends[h] = read_extent(pair[h], ph, ExtentUse::OpAttribute, false, true, "pad amount");
        } else {
          fail_op(k, op, ph, "a pad amount must be an integer, a symbol or an extent expression");
        }
      }
      a.pads.emplace_back(ends[0], ends[1]);
    }
  } else if (key == "value") {
    if (kind == OpKind::Full && v.is_object() && v.contains("size"))
      a.value = read_size_literal(v, path);  // full's value may be a size read at run time
    else
      a.value = read_number(v, path, "value");
  } else if (key == "dim") {
    a.dim = integer("dim");
  } else if (key == "length") {
    if (v.is_number_integer() && v.get<int64_t>() == 0) {
      a.length = Expr(0);
    } else {
      a.length = read_extent(v, path, ExtentUse::OpAttribute, false, true, "length");
    }
  } else if (key == "start") {
    a.start = read_literal(v, path, "start");
  } else if (key == "step") {
    a.step = read_literal(v, path, "step");
    if (a.step.as_double() == 0) fail_op(k, op, path, "step must not be zero");
  } else if (key == "allow_tf32") {
    if (!v.is_boolean()) fail_op(k, op, path, "allow_tf32 must be true or false");
    a.allow_tf32 = v.get<bool>();
  } else if (key == "is_causal" || key == "enable_gqa") {
    if (!v.is_boolean()) fail_op(k, op, path, key + " must be true or false");
    (key == "is_causal" ? a.is_causal : a.enable_gqa) = v.get<bool>();
  } else if (key == "stride" || key == "padding" || key == "dilation" ||
             key == "output_padding") {
    std::vector<int64_t> list = ints(key.c_str());
    (key == "stride"     ? a.stride
     : key == "padding"  ? a.padding
     : key == "dilation" ? a.dilation
                         : a.output_padding) = list;
  } else if (key == "groups") {
    a.groups = integer("groups");
  } else if (key == "transposed") {
    if (!v.is_boolean()) fail_op(k, op, path, "transposed must be true or false");
    a.transposed = v.get<bool>();
  } else if (key == "scale") {
    if (!v.is_number()) fail_op(k, op, path, "scale must be a number");
    a.scale = v.get<double>();
    if (!std::isfinite(*a.scale)) fail_op(k, op, path, "scale must be finite");
  } else if (key == "approximate") {
    // Handled by read_op (it selects the op kind).
  } else {
    FUSERC_UNREACHABLE("attribute '" + key + "' declared in ops.def but not read");
  }
}

void GraphReader::read_op(int k, const Json& op) {
  const std::string path = json_path_index("$.ops", k);
  if (!op.is_object()) fail(path, "an op must be an object {op, args, out, ...}");
  std::string name = read_string(require(op, path, "op", "an op"), path + ".op", "op");
  auto kind = op_by_name(name);
  if (!kind)
    fail_op(k, op, path + ".op", "unknown op " + quote(name) + did_you_mean(name, vocabulary()));
  const OpInfo& info = op_info(*kind);
  if (info.group == OpGroup::Reserved)
    fail_op(k, op, path + ".op", "op " + quote(name) + " is not supported yet");

  // Keys.
  std::vector<std::string> allowed = {"op", "args", "out"};
  for (const auto& s : info.attrs) allowed.push_back(s.key);
  for (const auto& [key, v] : op.items()) {
    (void)v;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail_op(k, op, json_path_member(path, key),
              "unknown key " + quote(key) + " for op '" + name + "'" + did_you_mean(key, allowed) +
                  "; allowed keys: " + join(allowed));
  }
  for (const auto& s : info.attrs)
    if (s.required && !op.contains(s.key))
      fail_op(k, op, path, "op '" + name + "' needs the attribute '" + s.key + "'");

  Op o;
  o.kind = *kind;
  o.source_index = k;

  // Results.
  const Json& out = require(op, path, "out", "an op");
  std::vector<std::string> out_names;
  if (out.is_string()) {
    out_names.push_back(out.get<std::string>());
  } else if (out.is_array()) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].is_string())
        fail_op(k, op, json_path_index(path + ".out", i), "out must hold names");
      out_names.push_back(out[i].get<std::string>());
    }
  } else {
    fail_op(k, op, path + ".out", "out must be a name or a list of names");
  }
  if (static_cast<int>(out_names.size()) != info.num_results)
    fail_op(k, op, path + ".out",
            "op '" + name + "' has " + count_of(info.num_results, "result", "results") +
                " but out lists " +
                count_of(static_cast<int64_t>(out_names.size()), "name", "names"));
  for (size_t i = 0; i < out_names.size(); ++i) {
    std::string p = out.is_array() ? json_path_index(path + ".out", i) : path + ".out";
    if (!is_identifier(out_names[i]))
      fail_op(k, op, p, "result name " + quote(out_names[i]) + " is not an identifier");
    if (out_names[i].size() > kMaxNameLength)
      fail_op(k, op, p, name_length_message(out_names[i], "result name"));
    check_new_name(out_names[i], p, k, &op);
    for (size_t j = 0; j < i; ++j)
      if (out_names[j] == out_names[i])
        fail_op(k, op, p, "result name " + quote(out_names[i]) + " is listed twice");
  }

  // Arguments.
  if (op.contains("args")) {
    const Json& args = op["args"];
    if (!args.is_array()) fail_op(k, op, path + ".args", "args must be a list");
    for (size_t i = 0; i < args.size(); ++i)
      o.args.push_back(read_arg(k, op, args[i], json_path_index(path + ".args", i)));
  } else if (info.min_args > 0) {
    fail_op(k, op, path, "op '" + name + "' needs args");
  }
  int n = static_cast<int>(o.args.size());
  if (n < info.min_args || (info.max_args >= 0 && n > info.max_args)) {
    std::string want = info.min_args == info.max_args ? args_count(info.min_args)
                       : info.max_args < 0            ? "at least " + args_count(info.min_args)
                                           : "between " + std::to_string(info.min_args) + " and " +
                                                 args_count(info.max_args);
    fail_op(k, op, path + ".args",
            "op '" + name + "' takes " + want + ", got " + std::to_string(n));
  }

  // Attributes.
  for (const auto& s : info.attrs)
    if (op.contains(s.key))
      read_attr(k, op, *kind, s.key, op[s.key], json_path_member(path, s.key), o.attrs);
  if (o.kind == OpKind::Gelu && op.contains("approximate")) {
    std::string p = path + ".approximate";
    std::string mode = read_string(op["approximate"], p, "approximate");
    if (mode == "tanh")
      o.kind = OpKind::GeluTanh;
    else if (mode != "none")
      fail_op(k, op, p, "approximate must be \"none\" or \"tanh\", got " + quote(mode));
  }
  if (o.kind == OpKind::Slice && !op.contains("steps") && !o.args.empty() &&
      !o.args[0].is_literal())
    o.attrs.steps.assign(f_.value(o.args[0].value).rank(), Expr(1));
  if (o.kind == OpKind::Iota) {
    if (o.attrs.start.kind == Literal::Kind::Int && !op.contains("start"))
      o.attrs.start = Literal::of_int(0);
    if (!op.contains("step")) o.attrs.step = Literal::of_int(1);
  }

  // Types and shapes.
  std::vector<InferredResult> results;
  try {
    results = infer_op(f_, o);
  } catch (const OpError& e) {
    fail_op(k, op, e.where.empty() ? path : path + "." + e.where, e.message);
  } catch (const UserError& e) {
    fail_op(k, op, path, e.what());
  }
  FUSERC_CHECK(results.size() == out_names.size(), "shape inference gave the wrong result count");
  if (o.kind == OpKind::Attention || o.kind == OpKind::Conv) {  // typed above; the IR holds
                                                                  // what it computes
    auto fresh = [&](const std::string& base) {
      std::string fresh_name = base;
      for (int i = 2; f_.find_value(fresh_name) || future_names_.count(fresh_name); ++i)
        fresh_name = base + "_" + std::to_string(i);
      return fresh_name;
    };
    try {
      if (o.kind == OpKind::Attention)
        expand_attention(f_, o, out_names[0], fresh);
      else
        expand_conv(f_, o, out_names[0], fresh);
    } catch (const OpError& e) {
      fail_op(k, op, e.where.empty() ? path : path + "." + e.where, e.message);
    }
    return;
  }
  int op_index = static_cast<int>(f_.ops.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].shape.size() > kMaxRank)
      fail_op(k, op, path,
              "the result " + quote(out_names[i]) + " has rank " +
                  std::to_string(results[i].shape.size()) + "; the limit is " +
                  std::to_string(kMaxRank));
    if (!least_bytes_fit(results[i].shape, results[i].dtype))
      fail_op(k, op, path,
              "the size in bytes of the result " + quote(out_names[i]) +
                  " overflows 64-bit integers");
    Value v;
    v.name = out_names[i];
    v.dtype = results[i].dtype;
    v.shape = results[i].shape;
    v.def_op = op_index;
    o.outs.push_back(f_.add_value(std::move(v)));
  }
  f_.ops.push_back(std::move(o));
}

}  // namespace fuserc
