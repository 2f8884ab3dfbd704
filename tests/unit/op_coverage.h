// Graphs that together use every elementwise op of the op table with every dtype it accepts,
// and every cast: shared by the emulated-kernel tests and the NVRTC compile tests, so that a
// new row in ops.def is covered by both without touching them.
#pragma once

#include <map>
#include <string>
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

}  // namespace fuserc::testing::coverage
