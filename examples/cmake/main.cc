// The example application: loads the package its build compiled (fuserc_add_package in
// CMakeLists.txt) with the fuserc runtime, prints its symbols, inputs and outputs, binds a size
// for every symbol and prints which kernel each launch of the plan runs. No GPU is needed.
//
//   bias_gelu_app [PACKAGE.fpkg] [SIZE]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "runtime/executable.h"

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : BIAS_GELU_PACKAGE;
  const int64_t size = argc > 2 ? std::atoll(argv[2]) : 4096;
  try {
    auto exe = fuserc::Executable::load(path);
    const auto& m = exe->metadata();
    const auto& ranges = exe->symbol_ranges();
    std::printf("%s: %zu symbols, %u inputs, %u outputs\n", m.name()->c_str(), ranges.size(),
                m.inputs()->size(), m.outputs()->size());
    std::vector<int64_t> symbols;
    for (const auto& s : ranges) {
      symbols.push_back(std::clamp(size, s.min, s.max));
      std::printf("  %s = %lld\n", s.name.c_str(), static_cast<long long>(symbols.back()));
    }
    auto binding = exe->bind(symbols);
    std::printf("  %u kernel launches:", m.plan()->size());
    for (uint32_t i = 0; i < m.plan()->size(); ++i)
      std::printf(" %s", m.kernels()->Get(binding->kernel_of[i])->name()->c_str());
    std::printf("\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bias_gelu_app: %s\n", e.what());
    return 1;
  }
  return 0;
}
