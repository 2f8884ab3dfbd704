// index_select and gather: their values in eval (hand-computed), the inputs `fuserc inputs`
// draws for them, and their kernels: the public cross-entropy and embedding graphs compile to
// one kernel each that matches eval in the emulator; indices outside the indexed extent are
// clamped (eval and kernels agree, and no kernel reads outside a tensor: the emulator's guard
// pages would fault); the index of an embedding row is loaded once per row, and the row read
// as 16-byte vectors when the table's row stride keeps looked-up rows aligned.
#include <catch2/catch.hpp>

#include <fstream>
#include <limits>
#include <sstream>

#include "emulated_check.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string graph_file(const std::string& name) {
  return read_file(std::string(FUSERC_TEST_GRAPHS_DIR) + "/" + name + ".json");
}

HostTensor tensor(DType dt, std::vector<int64_t> shape, const std::vector<double>& values) {
  HostTensor t(dt, std::move(shape));
  REQUIRE(static_cast<int64_t>(values.size()) == t.numel());
  for (size_t i = 0; i < values.size(); ++i) {
    if (is_float(dt))
      t.store_f64(static_cast<int64_t>(i), values[i]);
    else
      t.store_i64(static_cast<int64_t>(i), static_cast<int64_t>(values[i]));
  }
  return t;
}

std::vector<double> values(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.load_f64(i));
  return v;
}

const HostTensor& output(const std::vector<std::pair<std::string, HostTensor>>& outs,
                         const std::string& name) {
  for (const auto& [n, t] : outs)
    if (n == name) return t;
  FAIL("no output " << name);
  throw;
}

const char* kSmall = R"({"fuserc": 1, "name": "g",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]},
             {"name": "i", "dtype": "i32", "shape": [4]},
             {"name": "g", "dtype": "i64", "shape": [2, 2]},
             {"name": "h", "dtype": "i64", "shape": [2, 3]}],
  "ops": [{"op": "index_select", "args": ["x", "i"], "dim": -1, "out": "s"},
          {"op": "index_select", "args": ["x", "i"], "dim": 0, "out": "r"},
          {"op": "gather", "args": ["x", "g"], "dim": 1, "out": "t"},
          {"op": "gather", "args": ["x", "h"], "dim": -2, "out": "u"}],
  "outputs": ["s", "r", "t", "u"]})";

}  // namespace

TEST_CASE("index_select and gather in eval: PyTorch's values, out-of-range indices clamped",
          "[eval][indexing]") {
  Fusion f = parse_text(kSmall);
  TensorMap in;
  in["x"] = tensor(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  in["i"] = tensor(DType::I32, {4}, {2, 0, 1, 2});
  in["g"] = tensor(DType::I64, {2, 2}, {0, 2, 1, 1});
  in["h"] = tensor(DType::I64, {2, 3}, {1, 0, 1, 0, 0, 1});
  auto out = evaluate_fusion(f, in, "in");
  CHECK(output(out, "s").shape() == std::vector<int64_t>{2, 4});
  CHECK(values(output(out, "s")) == std::vector<double>{3, 1, 2, 3, 6, 4, 5, 6});
  CHECK(values(output(out, "t")) == std::vector<double>{1, 3, 5, 5});        // x[r][g[r][c]]
  CHECK(values(output(out, "u")) == std::vector<double>{4, 2, 6, 1, 2, 6});  // x[h[r][c]][c]
  // Outside [0, extent): clamped to the nearest end (the contract leaves the value open).
  in["i"] = tensor(DType::I32, {4}, {-7, 3, 1000, std::numeric_limits<int32_t>::min()});
  in["g"] = tensor(DType::I64, {2, 2},
                   {static_cast<double>(std::numeric_limits<int32_t>::max()) * 4, -1, 5, -3});
  out = evaluate_fusion(f, in, "in");
  CHECK(values(output(out, "s")) == std::vector<double>{1, 3, 3, 1, 4, 6, 6, 4});
  CHECK(values(output(out, "r")) == std::vector<double>{1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3});
  CHECK(values(output(out, "t")) == std::vector<double>{3, 1, 6, 4});
}

TEST_CASE("fuserc inputs draws indices inside the extent they index", "[eval][indexing]") {
  Fusion f =
      parse_text(read_file(std::string(FUSERC_TEST_CORPUS_DIR) + "/cross_entropy_fwd_bf16.json"));
  TensorMap in = make_random_inputs(f, choose_symbol_values(f, {{"N", 2000}, {"V", 7}}), 5);
  const HostTensor& t = in.at("target");
  bool low = false, high = false;
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t v = t.load_i64(i);
    REQUIRE(v >= 0);
    REQUIRE(v < 7);
    low = low || v == 0;
    high = high || v == 6;
  }
  CHECK(low);
  CHECK(high);
  // Through a reshape and into the smaller of two tables: the embedding ids index V rows.
  Fusion e = parse_text(graph_file("indexing_casts_views"));
  TensorMap ein = make_random_inputs(e, choose_symbol_values(e, {{"V", 3}, {"B", 30}}), 1);
  for (int64_t i = 0; i < ein.at("ids").numel(); ++i) REQUIRE(ein.at("ids").load_i64(i) < 3);
  for (int64_t i = 0; i < ein.at("t").numel(); ++i) REQUIRE(ein.at("t").load_i64(i) < 24);
}

TEST_CASE("cross-entropy and embedding + positions + layer norm: one kernel each, as eval",
          "[emulated][indexing]") {
  std::string ce = read_file(std::string(FUSERC_TEST_CORPUS_DIR) + "/cross_entropy_fwd_bf16.json");
  std::string emb = graph_file("public/embedding_pos_layernorm_bf16");
  for (const std::string* json : {&ce, &emb}) {
    auto exe = compile_graph(parse_text(*json));
    CHECK(exe->metadata().plan()->size() == 1);
  }
  check_graph(ce, {{{"N", 3}, {"V", 5}}, {{"N", 5}, {"V", 1031}}, {{"N", 2}, {"V", 5000}}});
  check_graph(emb, {{{"B", 1}, {"S", 1}, {"V", 1}}, {{"B", 2}, {"S", 9}, {"V", 100}}},
              {.every_memory_mode = false});
}

TEST_CASE("indices outside the extent are clamped by kernels: no read outside the tensor",
          "[emulated][indexing]") {
  for (const char* name : {"indexing_gather_reduce", "indexing_casts_views", "indexing_chained"}) {
    INFO("graph " << name);
    Fusion f = parse_text(graph_file(name));
    auto exe = compile_graph(f);
    TensorMap in = make_random_inputs(f, choose_symbol_values(f, {}), 11);
    // Every integer input gets indices far outside any extent, both ways.
    const int64_t wild[] = {-1, -1000000, 1 << 30, std::numeric_limits<int32_t>::min(),
                            std::numeric_limits<int32_t>::max()};
    for (auto& [input, t] : in) {
      if (!is_integer(t.dtype())) continue;
      for (int64_t i = 0; i < t.numel(); ++i)
        if (i % 3 == 0) t.store_i64(i, wild[(i / 3) % 5]);
    }
    auto want = evaluate_fusion(f, in, "inputs");
    for (const auto& mode : memory_modes()) {
      EmulatorDevice device({}, mode);
      auto got = run_package(*exe, device, in, "inputs");
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        INFO("output " << got[i].first);
        CHECK(compare_tensors(got[i].second, want[i].second) == "");
      }
    }
  }
}

TEST_CASE("an embedding row's index is loaded once per row, its row read by the threads",
          "[emulated][indexing]") {
  Fusion f = parse_text(graph_file("public/embedding_pos_layernorm_bf16"));
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  CompiledFusion c = compile_fusion(f, o, ctx);
  REQUIRE(c.kernels.size() == 1);
  const std::string& src = c.kernels[0].source;
  // On each path (vectors of 8 for aligned rows, else scalar) one load of the id, clamped,
  // before the loop over the row's elements; the table row read at ix * 768, as 16-byte
  // vectors on the vector path (768 a multiple of 8 keeps every row aligned when the table is).
  size_t vec_path = src.find("if (vec_ok) {");
  REQUIRE(vec_path != std::string::npos);
  size_t scalar_path = src.find("} else {", vec_path);
  REQUIRE(scalar_path != std::string::npos);
  for (size_t from : {vec_path, scalar_path}) {
    size_t id_load = src.find("ids[row]", from);
    REQUIRE(id_load != std::string::npos);
    size_t clamp = src.find("fz_clamp_index(", id_load);
    REQUIRE(clamp != std::string::npos);
    size_t loop = src.find("for (", clamp);
    REQUIRE(loop != std::string::npos);
    CHECK(src.find("ids[", loop) > (from == vec_path ? scalar_path : std::string::npos - 1));
  }
  size_t second_id = src.find("ids[", src.find("ids[row]", scalar_path) + 1);
  CHECK(second_id == std::string::npos);
  CHECK(src.find("fz_is_aligned<16>(table, 0)") < vec_path);
  CHECK(src.find("*reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(table + (g_v * 8 + ix_v * "
                 "768))",
                 vec_path) < scalar_path);
  CHECK(src.find("table[g_v") == std::string::npos);  // no lane-by-lane read of the table
  CHECK(src.find("table[ix * 768 + k]", scalar_path) != std::string::npos);
}

TEST_CASE("table rows looked up by index move as 16-byte vectors when the row stride allows",
          "[emulated][indexing]") {
  // softmax(table[ids][:, :8]): rows of 8 f32 (two vectors) W apart in the table. W a multiple
  // of 4 keeps every looked-up row aligned: the vector path reads the table as vectors, under
  // a test on W when it is a symbol; W = 10 never allows it (lane by lane, as before).
  auto json = [](const std::string& w) {
    const std::string sym = w == "\"W\"" ? R"(, "W": {"hint": 12, "min": 8})" : "";
    return R"({"fuserc": 1, "name": "lookup", "symbols": {"N": {"hint": 8}, "V": {"hint": 5})" +
           sym + R"(}, "inputs": [{"name": "table", "dtype": "f32", "shape": ["V", )" + w +
           R"(]}, {"name": "ids", "dtype": "i32", "shape": ["N"]}],
      "ops": [{"op": "index_select", "args": ["table", "ids"], "dim": 0, "out": "r"},
              {"op": "slice", "args": ["r"], "starts": [0, 0], "ends": ["N", 8], "steps": [1, 1], "out": "x"},
              {"op": "amax", "args": ["x"], "dims": [1], "keepdim": true, "out": "m"},
              {"op": "sub", "args": ["x", "m"], "out": "xs"}, {"op": "exp", "args": ["xs"], "out": "e"},
              {"op": "sum", "args": ["e"], "dims": [1], "keepdim": true, "out": "s"},
              {"op": "div", "args": ["e", "s"], "out": "y"}],
      "outputs": ["y"]})";
  };
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  for (const std::string w : {"\"W\"", "12", "10"}) {
    INFO("W " << w);
    CompiledFusion c = compile_fusion(parse_text(json(w)), o, ctx);
    REQUIRE(!c.kernels.empty());  // the 32-bit variant first (W a symbol: a 64-bit one too)
    const std::string src = c.kernels[0].source.substr(c.kernels[0].source.find("extern \"C\""));
    const bool vectors = w != "10";
    CHECK((src.find("reinterpret_cast<const fz_vec<float, 4>*>(table") != std::string::npos) ==
          vectors);
    CHECK((src.find("W % 4 == 0") != std::string::npos) == (w == "\"W\""));
    Bindings sizes = {{{"N", 9}, {"V", 5}}, {{"N", 1}, {"V", 1}}};
    if (w == "\"W\"") sizes = {{{"N", 9}, {"V", 5}, {"W", 12}}, {{"N", 9}, {"V", 5}, {"W", 10}}};
    check_graph(json(w), sizes);
  }
}
