// Shared by the emulated-kernel tests: compile a graph (CUDA generation, no NVRTC), pack it,
// load it through the package reader, run it in the CPU emulator at given symbol values under
// several memory layouts (misaligned buffers, guard pages before and after), and compare every
// output with the reference interpreter's.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/compile_fusion.h"
#include "core/eval/interpreter.h"
#include "core/eval/random_inputs.h"
#include "serde/reader/package_reader.h"
#include "runtime/emulator_device.h"
#include "runtime/run_package.h"
#include "serde/package_writer.h"
#include "tensor_compare.h"
#include "test_util.h"

namespace fuserc::testing {

using Bindings = std::vector<std::map<std::string, int64_t>>;

inline std::unique_ptr<Executable> compile_graph(const Fusion& f) {
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  CompiledFusion c = compile_fusion(f, o, ctx);
  return std::make_unique<Executable>(
      PackageView::from_bytes(serialize_package(c, {}), f.name + ".fpkg"));
}

// The generated CUDA of each kernel of `json` (CUDA generation, no NVRTC), from its
// `__global__` on: the kernel without the preamble, for tests of what the code does.
inline std::vector<std::string> kernel_sources(const std::string& json) {
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  CompiledFusion c = compile_fusion(parse_text(json), o, ctx);
  std::vector<std::string> out;
  for (const auto& k : c.kernels) {
    size_t at = k.source.find("__global__");
    REQUIRE(at != std::string::npos);
    out.push_back(k.source.substr(at));
  }
  return out;
}

inline const std::vector<EmulatedMemory>& memory_modes() {
  static const std::vector<EmulatedMemory> modes = {
      {0, EmulatedMemory::Guard::Before},
      {0, EmulatedMemory::Guard::After},
      {8, EmulatedMemory::Guard::None},
  };
  return modes;
}

struct CheckOptions {
  bool exact = false;             // outputs bit-equal to the reference (random ops)
  bool every_memory_mode = true;  // else only guard pages after each buffer
};

// The oracle's rule for a float output: the contract lets a kernel or a library step round an
// intermediate to its dtype where it crosses a launch, so an output is judged at the tolerance
// of the least precise float op result on its path (inputs are exact): the scale that turns the
// output dtype's tolerance into that one (1 when the output's own is the loosest).
inline double path_tolerance_scale(const Fusion& f, const std::string& output) {
  std::vector<double> loosest(f.values.size(), 0.0);  // per value: the loosest tolerance above
  for (const Op& op : f.ops) {
    double t = 0;
    for (const Operand& a : op.args)
      if (!a.is_literal()) t = std::max(t, loosest[a.value]);
    for (ValueId o : op.outs)
      loosest[o] = std::max(t, is_float(f.value(o).dtype) ? tolerance(f.value(o).dtype) : 0.0);
  }
  auto v = f.find_value(output);
  if (!v || !is_float(f.value(*v).dtype)) return 1.0;
  return std::max(1.0, loosest[*v] / tolerance(f.value(*v).dtype));
}

// Binds symbols by name (the package orders them its own way).
inline std::shared_ptr<const Binding> bind_named(Executable& exe,
                                                 const std::map<std::string, int64_t>& values) {
  std::vector<int64_t> v;
  for (const auto& s : exe.symbol_ranges()) v.push_back(values.at(s.name));
  return exe.bind(v);
}

// Runs `json` at each binding; every output must match eval. Returns, per binding, the names
// of the kernels the plan launched.
inline std::vector<std::vector<std::string>> check_graph(const std::string& json,
                                                         const Bindings& bindings,
                                                         CheckOptions options = {}) {
  Fusion f = parse_text(json);
  auto exe = compile_graph(f);
  std::vector<std::vector<std::string>> launched;
  for (size_t b = 0; b < bindings.size(); ++b) {
    auto symbols = choose_symbol_values(f, bindings[b]);
    TensorMap inputs = make_random_inputs(f, symbols, 17 + b);
    auto want = evaluate_fusion(f, inputs, "inputs");
    std::vector<std::string> names;
    for (uint32_t k : exe->bind_inputs(inputs, "inputs")->kernel_of)
      names.push_back(k == kLibraryStep ? std::string("library step")
                                        : exe->metadata().kernels()->Get(k)->name()->str());
    launched.push_back(names);
    std::vector<EmulatedMemory> modes = memory_modes();
    if (!options.every_memory_mode) modes = {{0, EmulatedMemory::Guard::After}};
    for (const auto& mode : modes) {
      EmulatorDevice device({}, mode);
      auto got = run_package(*exe, device, inputs, "inputs");
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        std::string sizes;
        for (const auto& [name, value] : symbols) sizes += " " + name + "=" + std::to_string(value);
        INFO("graph " << f.name << ", output " << want[i].first << ", sizes" << sizes
                      << ", misalign " << mode.misalign_bytes << ", guard "
                      << static_cast<int>(mode.guard));
        CHECK(got[i].first == want[i].first);
        if (options.exact) CHECK(got[i].second.bytes() == want[i].second.bytes());
        CHECK(compare_tensors(got[i].second, want[i].second,
                              path_tolerance_scale(f, want[i].first)) == "");
      }
    }
  }
  return launched;
}

}  // namespace fuserc::testing
