// A program linked with the loader alone (fuserc_loader: the package reader, the executable,
// the emulator device), as an embedding program would be: it loads a package, binds the
// inputs' shapes and runs the kernels. That it links at all proves that loading needs no
// segmentation, scheduling, lowering, code generation or compilation; loader_only_check.sh
// also checks its symbols.
//
//   loader_only_main PACKAGE INPUTS.safetensors OUTPUTS.safetensors
#include <iostream>

#include "core/base/diagnostics.h"
#include "core/base/safetensors.h"
#include "runtime/emulator_device.h"
#include "runtime/executable.h"
#include "runtime/run_package.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: loader_only_main PACKAGE INPUTS OUTPUTS\n";
    return 2;
  }
  try {
    auto exe = fuserc::Executable::load(argv[1]);
    fuserc::TensorMap inputs = fuserc::read_safetensors(argv[2]);
    fuserc::EmulatorDevice device;
    auto outputs = fuserc::run_package(*exe, device, inputs, argv[2]);
    std::vector<std::pair<std::string, const fuserc::HostTensor*>> list;
    for (const auto& [name, t] : outputs) list.emplace_back(name, &t);
    fuserc::write_safetensors(argv[3], list);
    std::cout << "loader_only: ran " << exe->metadata().plan()->size() << " launches of "
              << exe->metadata().name()->str() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "loader_only: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
