// The graphs of tests/graphs (scripts/make_contract_graphs.py writes most of them) end to end:
// each is compiled, packed, loaded and run in the CPU emulator at several sizes and compared
// with eval (emulated_check.h); eval itself is checked against PyTorch by the graphs_eval test
// (tests/graphs/eval). Then what the in-place graphs need of the plan: kernels that read an
// input run before the kernel that overwrites it, unsafe fusions are split, a reader that
// needs the overwriting kernel's results reads a copy taken before, grid reductions written in
// place still split rows over blocks and give the same bits every run; and an input written in
// place and listed as an output is returned updated.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulated_check.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

namespace fs = std::filesystem;

std::string read_graph(const std::string& name) {
  std::ifstream in(std::string(FUSERC_TEST_GRAPHS_DIR) + "/" + name + ".json");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> graph_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(FUSERC_TEST_GRAPHS_DIR))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The hints; every symbol at its minimum; about 3/2 of the hints (at most 3000).
Bindings sizes_of(const Fusion& f) {
  std::map<std::string, int64_t> small, larger;
  for (const auto& s : f.symbols) {
    small[s.name] = s.min;
    larger[s.name] = std::clamp<int64_t>(std::min<int64_t>(s.hint * 3 / 2 + 1, 3000), s.min, s.max);
  }
  return {{}, small, larger};
}

// The buffers each launch of the plan writes, by name.
std::vector<std::vector<std::string>> plan_writes(Executable& exe) {
  const fb::Metadata& m = exe.metadata();
  std::vector<std::vector<std::string>> out;
  for (const auto* l : *m.plan()) {
    std::vector<std::string> names;
    for (uint32_t b : *l->writes()) names.push_back(m.buffers()->Get(b)->name()->str());
    out.push_back(names);
  }
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const HostTensor& named(const std::vector<std::pair<std::string, HostTensor>>& outs,
                        const std::string& name) {
  for (const auto& [n, t] : outs)
    if (n == name) return t;
  FAIL("no output " << name);
  throw;
}

// The graphs whose names start with `prefix` (or, for "", those no other family takes), each
// at several sizes. One test case per family, so that they can run in parallel.
const std::vector<std::string> kFamilies = {"inplace_reduce_", "inplace_accumulate_", "inplace_",
                                            "literals_",       "unary_new_",          "indexing_"};

void check_family(const std::string& prefix) {
  int checked = 0;
  for (const std::string& name : graph_names()) {
    std::string family;
    for (const std::string& p : kFamilies)
      if (family.empty() && name.rfind(p, 0) == 0) family = p;
    if (family != prefix) continue;
    INFO("graph " << name);
    std::string json = read_graph(name);
    check_graph(json, sizes_of(parse_text(json)), {.every_memory_mode = false});
    ++checked;
  }
  CHECK(checked >= 3);
}

}  // namespace

TEST_CASE("tests/graphs in the emulator: reductions written in place, every kind and dtype",
          "[emulated]") {
  check_family("inplace_reduce_");
}

TEST_CASE("tests/graphs in the emulator: statistics accumulated into buffers", "[emulated]") {
  check_family("inplace_accumulate_");
}

TEST_CASE("tests/graphs in the emulator: grid reductions, normalizations and hazards in place",
          "[emulated]") {
  check_family("inplace_");
}

TEST_CASE("tests/graphs in the emulator: inf, -inf and nan literals", "[emulated]") {
  check_family("literals_");
}

TEST_CASE("tests/graphs in the emulator: the added unary ops, every dtype", "[emulated]") {
  check_family("unary_new_");
}

TEST_CASE("tests/graphs in the emulator: index_select and gather for every dtype and dim",
          "[emulated]") {
  check_family("indexing_");
}

TEST_CASE("tests/graphs in the emulator: the other graphs", "[emulated]") {
  check_family("");
}

TEST_CASE("in-place graphs: readers run first, unsafe fusions are split, copies when needed",
          "[emulated]") {
  auto plan = [](const std::string& name) {
    return plan_writes(*compile_graph(parse_text(read_graph(name))));
  };
  // The buffer is read along the reduced axis (other rows): the product first, then the sum.
  auto cross = plan("inplace_hazard_cross_row");
  REQUIRE(cross.size() == 2);
  CHECK(has(cross[0], "t"));
  CHECK(has(cross[1], "s"));
  // A normalization reading the buffer its statistic overwrites: the reader runs first.
  auto stat = plan("inplace_hazard_norm_reads_stat");
  REQUIRE(stat.size() == 2);
  CHECK(has(stat[0], "y"));
  CHECK(has(stat[1], "m"));
  // A transposed read of the input written in place: two kernels.
  auto transpose = plan("inplace_hazard_transpose");
  REQUIRE(transpose.size() == 2);
  CHECK(has(transpose[1], "y"));
  // Other kernels read the input: the one that overwrites it runs last.
  auto readers = plan("inplace_hazard_reader_first");
  REQUIRE(readers.size() == 3);
  CHECK(has(readers[2], "y"));
  // A reader that needs the overwriting kernel's result reads a copy taken first.
  // (The maximum over all of s is one row of up to S elements: a split reduction, then the
  // add, rather than a one-block normalization.)
  auto copy = plan("inplace_hazard_copy_before_write");
  REQUIRE(copy.size() == 4);
  CHECK(has(copy[0], "x_before_write"));
  CHECK(has(copy[1], "s"));
  CHECK(has(copy[3], "m"));
  // Safe in one kernel: normalizations into their input (with statistics into buffers, one
  // accumulated), and reductions that accumulate into buffers or read them before reducing.
  for (const char* one : {"inplace_softmax_f16", "inplace_layer_norm_bf16", "inplace_rms_norm_f32"})
    CHECK(plan(one).size() == 1);
  auto acc = plan("inplace_accumulate_f32");
  REQUIRE(acc.size() == 2);  // contiguous rows, strided rows
  CHECK(acc[0].size() == 6);
}

TEST_CASE("grid reductions written in place split rows over blocks and give the same bits",
          "[emulated]") {
  std::string json = read_graph("inplace_grid");
  Fusion f = parse_text(json);
  auto exe = compile_graph(f);
  const std::map<std::string, int64_t> sizes = {{"R", 4}, {"L", 100000}};
  auto binding = bind_named(*exe, sizes);
  int grids = 0;
  for (uint32_t k : binding->kernel_of) {
    const fb::Kernel* kernel = exe->metadata().kernels()->Get(k);
    INFO("kernel " << kernel->name()->str());
    CHECK(kernel->grid_reduction());
    grids += binding->slot(kernel->grid()->Get(1)) > 1;
  }
  CHECK(grids == 2);  // contiguous and strided rows both split over several blocks
  TensorMap inputs = make_random_inputs(f, choose_symbol_values(f, sizes), 3);
  auto want = evaluate_fusion(f, inputs, "inputs");
  EmulatorDevice device;
  auto first = run_package(*exe, device, inputs, "inputs");
  REQUIRE(first.size() == want.size());
  for (size_t i = 0; i < first.size(); ++i) {
    INFO("output " << first[i].first);
    CHECK(compare_tensors(first[i].second, want[i].second) == "");
  }
  for (int run = 0; run < 2; ++run) {
    auto again = run_package(*exe, device, inputs, "inputs");
    for (size_t i = 0; i < first.size(); ++i)
      CHECK(again[i].second.bytes() == first[i].second.bytes());
  }
}

TEST_CASE("an input written in place and listed as an output is returned updated", "[emulated]") {
  std::string json = read_graph("updated_inputs_adam");
  Fusion f = parse_text(json);
  auto exe = compile_graph(f);
  // The package: 'p' is read back from the buffer 'p_new' is written into; 'g' (not written)
  // is the caller's tensor.
  const fb::Metadata& m = exe->metadata();
  auto output = [&](const std::string& name) -> const fb::Tensor* {
    for (const auto* t : *m.outputs())
      if (t->name()->str() == name) return t;
    FAIL("no output " << name);
    return nullptr;
  };
  const int p_index = f.value(*f.find_value("p")).input_index;
  CHECK(output("p")->source_input() == -1);
  CHECK(output("p")->alias_input() == p_index);
  CHECK(output("p")->buffer() == output("p_new")->buffer());
  CHECK(output("g")->source_input() == f.value(*f.find_value("g")).input_index);
  TensorMap inputs = make_random_inputs(f, choose_symbol_values(f, {{"N", 1000}}), 9);
  auto want = evaluate_fusion(f, inputs, "inputs");
  CHECK(named(want, "p").bytes() == named(want, "p_new").bytes());
  CHECK(named(want, "m").bytes() == named(want, "m_new").bytes());
  CHECK(named(want, "g").bytes() == inputs.at("g").bytes());
  CHECK(named(want, "p").bytes() != inputs.at("p").bytes());
  EmulatorDevice device;
  auto got = run_package(*exe, device, inputs, "inputs");
  for (const char* name : {"p", "m", "v"}) {
    INFO("output " << name);
    CHECK(compare_tensors(named(got, name), named(want, name)) == "");
    CHECK(compare_tensors(named(got, name), named(got, std::string(name) + "_new")) == "");
  }
  CHECK(named(got, "g").bytes() == inputs.at("g").bytes());
}
