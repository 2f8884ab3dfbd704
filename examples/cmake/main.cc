// The example application: loads the package its build compiled (fuserc_add_package in
// CMakeLists.txt) with the fuserc runtime, binds a size for each of the graph's symbols and
// prints which kernel each launch of the plan runs. No GPU is needed for any of it.
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
    std::vector<int64_t> symbols;
    for (const auto& s : exe->symbol_ranges()) symbols.push_back(std::clamp(size, s.min, s.max));
    auto binding = exe->bind(symbols);
    std::printf("%s: %u kernels, %u launches per run\n", m.name()->c_str(), m.kernels()->size(),
                m.plan()->size());
    for (size_t i = 0; i < exe->symbol_ranges().size(); ++i)
      std::printf("  %s = %lld\n", exe->symbol_ranges()[i].name.c_str(),
                  static_cast<long long>(symbols[i]));
    for (uint32_t i = 0; i < m.plan()->size(); ++i)
      std::printf("  launch %u: %s\n", i, m.kernels()->Get(binding->kernel_of[i])->name()->c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bias_gelu_app: %s\n", e.what());
    return 1;
  }
  return 0;
}
