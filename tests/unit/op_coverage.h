// Graphs that together use every elementwise op of the op table with every dtype it accepts,
// and every cast: shared by the emulated-kernel tests and the NVRTC compile tests, so that a
// new row in ops.def is covered by both without touching them.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/ir/op_table.h"
#include "test_util.h"

namespace fuserc::testing::coverage {

inline std::string graph(const std::string& name, const std::string& symbols,
                         const std::string& inputs, const std::string& ops,
                         const std::string& outputs, const std::string& extra = "") {
  return R"({"fuserc": 1, "name": ")" + name + R"(", "symbols": {)" + symbols +
         R"(}, "inputs": [)" + inputs + R"(], "ops": [)" + ops + R"(], "outputs": [)" + outputs +
         "]" + extra + "}";
}

inline const std::string kNM =
    R"("N": {"hint": 37, "max": 100000}, "M": {"hint": 53, "max": 100000})";
inline const std::vector<std::map<std::string, int64_t>> kSizes = {
    {{"N", 37}, {"M", 53}}, {{"N", 1}, {"M", 1}}, {{"N", 5}, {"M", 130}}};

inline const char* kDtypes[] = {"bool", "i32", "i64", "f16", "bf16", "f32", "f64"};

inline std::string range_for(const std::string& dtype, bool divisor) {
  if (dtype == "bool") return "";
  if (dtype == "i32" || dtype == "i64")
    return divisor ? R"(, "range": [1, 7])" : R"(, "range": [-20, 20])";
  return R"(, "range": [-3, 3])";
}

inline bool parses(const std::string& json) {
  try {
    parse_text(json);
    return true;
  } catch (const UserError&) {
    return false;
  }
}

inline std::string unary_ops_graph(const std::string& dt) {
  std::string in =
      R"({"name": "x", "dtype": ")" + dt + R"(", "shape": ["N", "M"])" + range_for(dt, false) + "}";
  std::string ops, outs;
  for (const auto& info : all_ops()) {
    if (info.group != OpGroup::Unary || info.is_internal()) continue;
    std::vector<std::string> variants = {std::string(R"({"op": ")") + info.name +
                                         R"(", "args": ["x"], "out": "o_)" + info.name + "\"}"};
    if (info.kind == OpKind::Gelu)
      variants.push_back(
          R"({"op": "gelu", "args": ["x"], "approximate": "tanh", "out": "o_gelu_tanh"})");
    for (const auto& op : variants) {
      std::string out = op.substr(op.find("\"out\": \"") + 8);
      out = out.substr(0, out.find('"'));
      if (!parses(graph("u", kNM, in, op, "\"" + out + "\""))) continue;
      ops += (ops.empty() ? "" : ", ") + op;
      outs += (outs.empty() ? "\"" : ", \"") + out + "\"";
    }
  }
  return graph("unary_" + dt, kNM, in, ops, outs);
}

inline std::string binary_ops_graph(const std::string& dt) {
  std::string in = R"({"name": "x", "dtype": ")" + dt + R"(", "shape": ["N", "M"])" +
                   range_for(dt, false) + R"(}, {"name": "y", "dtype": ")" + dt +
                   R"(", "shape": ["M"])" + range_for(dt, true) + "}";
  std::string ops, outs;
  for (const auto& info : all_ops()) {
    if (info.group != OpGroup::Binary) continue;
    std::string name = info.name;
    // A random bool divisor is often false: integer division by zero is an error in eval.
    bool int_division = info.kind == OpKind::Fmod || info.kind == OpKind::Remainder;
    if (int_division && dt == "bool") continue;
    std::vector<std::pair<std::string, std::string>> forms = {
        {"o_" + name, R"("x", "y")"}, {"l_" + name, R"("x", 2)"}, {"r_" + name, R"(3, "y")"}};
    for (const auto& [out, args] : forms) {
      std::string op =
          R"({"op": ")" + name + R"(", "args": [)" + args + R"(], "out": ")" + out + "\"}";
      if (!parses(graph("b", kNM, in, op, "\"" + out + "\""))) continue;
      ops += (ops.empty() ? "" : ", ") + op;
      outs += (outs.empty() ? "\"" : ", \"") + out + "\"";
    }
  }
  return graph("binary_" + dt, kNM, in, ops, outs);
}

inline std::string casts_graph(const std::string& from) {
  std::string range = from == "bool" ? "" : R"(, "range": [-40000, 40000])";
  std::string in = R"({"name": "x", "dtype": ")" + from + R"(", "shape": ["N", "M"])" + range + "}";
  std::string ops, outs;
  for (const char* to : kDtypes) {
    ops += std::string(ops.empty() ? "" : ", ") + R"({"op": "cast", "args": ["x"], "dtype": ")" +
           to + R"(", "out": "c_)" + to + "\"}";
    outs += std::string(outs.empty() ? "\"" : ", \"") + "c_" + to + "\"";
  }
  return graph("cast_from_" + from, kNM, in, ops, outs);
}

inline bool is_float_dtype_name(const std::string& dt) {
  return dt == "f16" || dt == "bf16" || dt == "f32" || dt == "f64";
}

// Every reduction `dt` accepts over contiguous rows (dims [1], results <op>_inner) and strided
// rows (dims [0] with keepdim, results <op>_outer) of x: [N, M].
inline std::string reductions_graph(const std::string& dt) {
  static const char* reductions[] = {"sum",  "prod", "max", "min",     "amax",
                                     "amin", "mean", "var", "var_mean"};
  std::string ops, outs;
  for (const auto& [dims, suffix, keepdim] :
       {std::tuple<std::string, std::string, bool>{"[1]", "_inner", false},
        std::tuple<std::string, std::string, bool>{"[0]", "_outer", true}}) {
    for (std::string r : reductions) {
      bool float_only = r == "mean" || r == "var" || r == "var_mean";
      if (float_only && !is_float_dtype_name(dt)) continue;
      std::string out = r + suffix;
      std::string out_json = "\"" + out + "\"", listed = out_json;
      if (r == "var_mean") {
        out_json = "[\"" + out + "_v\", \"" + out + "_m\"]";
        listed = "\"" + out + "_v\", \"" + out + "_m\"";
      }
      ops += (ops.empty() ? "" : ", ") + std::string(R"({"op": ")") + r +
             R"(", "args": ["x"], "dims": )" + dims + (keepdim ? R"(, "keepdim": true)" : "") +
             R"(, "out": )" + out_json + "}";
      outs += (outs.empty() ? "" : ", ") + listed;
    }
  }
  std::string in =
      R"({"name": "x", "dtype": ")" + dt + R"(", "shape": ["N", "M"], "range": [-2, 2]})";
  return graph("reductions_" + dt, kNM, in, ops, outs);
}

// Softmax, log-softmax, layer norm, RMS norm and softmax backward over rows of H (hint 1024),
// N rows; by name.
inline std::vector<std::pair<std::string, std::string>> normalization_graphs() {
  const std::string sym = R"("N": {"hint": 4}, "H": {"hint": 1024})";
  return {
      {"softmax", graph("softmax", sym, R"({"name": "x", "dtype": "f32", "shape": ["N", "H"]})",
                        R"({"op": "amax", "args": ["x"], "dims": [-1], "keepdim": true, "out": "m"},
                {"op": "sub", "args": ["x", "m"], "out": "xs"}, {"op": "exp", "args": ["xs"], "out": "e"},
                {"op": "sum", "args": ["e"], "dims": [-1], "keepdim": true, "out": "s"},
                {"op": "div", "args": ["e", "s"], "out": "y"})",
                        R"("y")")},
      {"log_softmax",
       graph("log_softmax", sym, R"({"name": "x", "dtype": "bf16", "shape": ["N", "H"]})",
             R"({"op": "cast", "args": ["x"], "dtype": "f32", "out": "xf"},
                {"op": "amax", "args": ["xf"], "dims": [1], "out": "m"},
                {"op": "broadcast_in_dim", "args": ["m"], "shape": ["N", "H"], "broadcast_dims": [0], "out": "mb"},
                {"op": "sub", "args": ["xf", "mb"], "out": "xs"}, {"op": "exp", "args": ["xs"], "out": "e"},
                {"op": "sum", "args": ["e"], "dims": [1], "keepdim": true, "out": "s"},
                {"op": "log", "args": ["s"], "out": "ls"}, {"op": "sub", "args": ["xs", "ls"], "out": "yf"},
                {"op": "cast", "args": ["yf"], "dtype": "bf16", "out": "y"})",
             R"("y")")},
      {"layer_norm",
       graph(
           "layer_norm", sym,
           R"({"name": "x", "dtype": "f16", "shape": ["N", "H"]}, {"name": "w", "dtype": "f16", "shape": ["H"]}, {"name": "b", "dtype": "f16", "shape": ["H"]})",
           R"({"op": "var_mean", "args": ["x"], "dims": [1], "keepdim": true, "correction": 0, "out": ["v", "mu"]},
                {"op": "add", "args": ["v", 1e-5], "out": "ve"}, {"op": "rsqrt", "args": ["ve"], "out": "rstd"},
                {"op": "sub", "args": ["x", "mu"], "out": "xc"}, {"op": "mul", "args": ["xc", "rstd"], "out": "xn"},
                {"op": "mul", "args": ["xn", "w"], "out": "xw"}, {"op": "add", "args": ["xw", "b"], "out": "y"})",
           R"("y", "mu", "rstd")")},
      {"rms_norm",
       graph(
           "rms_norm", sym,
           R"({"name": "x", "dtype": "bf16", "shape": ["N", "H"]}, {"name": "w", "dtype": "bf16", "shape": ["H"]})",
           R"({"op": "cast", "args": ["x"], "dtype": "f32", "out": "xf"}, {"op": "mul", "args": ["xf", "xf"], "out": "sq"},
                {"op": "mean", "args": ["sq"], "dims": [1], "keepdim": true, "out": "ms"},
                {"op": "add", "args": ["ms", 1e-6], "out": "mse"}, {"op": "rsqrt", "args": ["mse"], "out": "r"},
                {"op": "mul", "args": ["xf", "r"], "out": "xn"}, {"op": "cast", "args": ["xn"], "dtype": "bf16", "out": "xb"},
                {"op": "mul", "args": ["xb", "w"], "out": "y"})",
           R"("y")")},
      {"softmax_bwd",
       graph(
           "softmax_bwd", sym,
           R"({"name": "y", "dtype": "f16", "shape": ["N", "H"]}, {"name": "dy", "dtype": "f16", "shape": ["N", "H"]})",
           R"({"op": "mul", "args": ["y", "dy"], "out": "p"},
                {"op": "sum", "args": ["p"], "dims": [1], "keepdim": true, "out": "s"},
                {"op": "sub", "args": ["dy", "s"], "out": "d"}, {"op": "mul", "args": ["y", "d"], "out": "dx"})",
           R"("dx")")},
  };
}

}  // namespace fuserc::testing::coverage
