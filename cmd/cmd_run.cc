// `fuserc run PKG --inputs IN --outputs OUT [--emulate]`: execute a package.
#include "cmd/commands.h"
#include "core/base/diagnostics.h"
#include "core/base/safetensors.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_error.h"
#include "runtime/emulator_device.h"
#include "runtime/executable.h"
#include "runtime/run_package.h"

namespace fuserc::cmd {

void add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "run",
      "Load a package (no re-lowering, no recompiling) and execute its kernels on the "
      "inputs: on the GPU, or with --emulate on the CPU.");
  struct Options {
    std::string package, inputs, outputs;
    bool emulate = false;
    bool verbose = false;
    int device = 0;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("PACKAGE", o->package, "a package written by fuserc compile")->required();
  sub->add_option("--inputs", o->inputs, "safetensors file with one tensor per graph input")
      ->required();
  sub->add_option("--outputs", o->outputs, "safetensors file to write the outputs to")->required();
  sub->add_flag("--emulate", o->emulate,
                "run on the CPU: the package's own CUDA sources are compiled with the host C++ "
                "compiler (cached) against fuserc's CUDA emulation and executed");
  sub->add_flag("-v,--verbose", o->verbose, "print the host compiler commands (--emulate)");
  sub->add_option("--device", o->device, "the CUDA device to run on (default 0)");
  sub->footer(
      "Without --emulate the kernels run on a GPU through the CUDA driver (libcuda.so.1, loaded\n"
      "when needed; FUSERC_LIBCUDA names another file): the cubin built for the GPU's\n"
      "architecture, else a compatible one, else the PTX compiled by the driver.\n"
      "--emulate needs a host C++ compiler (FUSERC_HOST_CXX, else c++); compiled kernels are\n"
      "cached in FUSERC_CACHE_DIR (default ~/.cache/fuserc). FUSERC_EMU_THREADS sets how many\n"
      "host threads run blocks. Nothing is written unless the run succeeds.\n"
      "Before any launch: the package is checked (a truncated or corrupted one is refused),\n"
      "every input's dtype, rank and extents, each symbol bound to one size within its range,\n"
      "every size computed without 64-bit overflow and every grid within the CUDA limits.");
  sub->callback([o] {
    auto exe = Executable::load(o->package);
    TensorMap inputs = read_safetensors(o->inputs);
    std::unique_ptr<Device> device;
    if (o->emulate) {
      emu::BuildOptions bo;
      bo.verbose = o->verbose;
      device = std::make_unique<EmulatorDevice>(bo);
    } else {
      try {
        device = std::make_unique<cuda::CudaDevice>(o->device);
      } catch (const cuda::CudaError& e) {
        if (e.kind() != cuda::Failure::NoDriver) throw;
        throw UserError(std::string(e.what()) +
                        " (--emulate runs the package's kernels on the CPU instead)");
      }
    }
    auto outputs = run_package(*exe, *device, inputs, o->inputs);
    std::vector<std::pair<std::string, const HostTensor*>> list;
    for (const auto& [name, t] : outputs) list.emplace_back(name, &t);
    write_safetensors(o->outputs, list);
  });
}

}  // namespace fuserc::cmd
