// The whole plan in the emulator, timed (see bench_emulated.h).
#include "cmd/bench_emulated.h"

#include <chrono>

#include "cmd/bench_timing.h"
#include "core/eval/random_inputs.h"
#include "runtime/emulator_device.h"
#include "runtime/run_package.h"

namespace fuserc::cmd {

nlohmann::json bench_emulated_plan(Executable& exe, const Fusion& graph,
                                   const std::map<std::string, int64_t>& given, int runs) {
  const auto symbols = choose_symbol_values(graph, given);
  const TensorMap inputs = make_random_inputs(graph, symbols, 0);
  EmulatorDevice device{emu::BuildOptions{}};
  const auto start = std::chrono::steady_clock::now();
  run_package(exe, device, inputs, "random inputs");
  const double first =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  const double median =
      runs > 1 ? median_us(runs - 1, [&] { run_package(exe, device, inputs, "random inputs"); })
               : first;
  int64_t kernels = 0, library = 0;
  for (uint32_t k : exe.bind_inputs(inputs, "random inputs")->kernel_of)
    (k == kLibraryStep ? library : kernels) += 1;
  nlohmann::json bound = nlohmann::json::object();
  for (const auto& [name, value] : symbols) bound[name] = value;
  return {{"runs", runs},        {"first_us", first},      {"median_us", median},
          {"kernels", kernels},  {"library_steps", library}, {"symbols", bound}};
}

}  // namespace fuserc::cmd
