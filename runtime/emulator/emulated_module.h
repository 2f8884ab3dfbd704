// Owns CPU emulation of a package's CUDA kernels (`fuserc run --emulate`): the CUDA source text,
// unchanged, is compiled by the host C++ compiler against the emulation prelude
// (cuda_emulation.h, embedded in the binary) into a cached shared object, which is loaded and
// whose kernels are launched on the CPU with CUDA's semantics (blocks on host threads, CUDA
// threads as fibers; see cuda_emulation.h).
//
// Constraints on the CUDA text: no inline PTX (asm), no CUDA headers but cuda_fp16.h and
// cuda_bf16.h, dynamic shared memory declared as `extern __shared__ __align__(16) unsigned char
// fz_smem[];`, no code that depends on __CUDA_ARCH__ being defined (FUSERC_EMULATION is).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fuserc::emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// A kernel to make launchable: its name (an extern "C" __global__ function of the source) and
// the exact C++ type of each parameter, e.g. "const __nv_bfloat16* __restrict__", "int".
struct KernelSignature {
  std::string name;
  std::vector<std::string> param_types;
};

struct BuildOptions {
  // Where compiled modules are cached (in its emu/ subfolder). "": $FUSERC_CACHE_DIR, else
  // $XDG_CACHE_HOME/fuserc, else $HOME/.cache/fuserc.
  std::string cache_dir;
  // The host C++ compiler. "": $FUSERC_HOST_CXX, else "c++" on PATH, else "g++".
  std::string compiler;
  bool verbose = false;  // print the compiler command on stderr
};

class EmulatedModule {
 public:
  // Compiles `source` with the emulation prelude and one launch shim per kernel into a shared
  // object and loads it. Cached by content (source, shims, prelude, compiler identity, flags):
  // a hit compiles nothing. Throws UserError when there is no host compiler, InternalError when
  // the compilation fails (the message shows the start of the compiler's output and where the
  // source was kept).
  static std::unique_ptr<EmulatedModule> build(const std::string& source,
                                               const std::vector<KernelSignature>& kernels,
                                               const BuildOptions& options = {});

  // Runs a kernel to completion. args[i] points to the value of parameter i (as
  // cuLaunchKernel's kernelParams). Blocks run on $FUSERC_EMU_THREADS host threads (default:
  // one per hardware thread). A launch CUDA would refuse (block or grid too large, too much
  // dynamic shared memory, more threads than __launch_bounds__) throws UserError naming the
  // kernel; a kernel that fails (deadlock at a barrier, __trap) throws InternalError; an unknown
  // kernel name throws InternalError.
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, size_t dynamic_smem_bytes,
              void** args) const;

  ~EmulatedModule();
  EmulatedModule(const EmulatedModule&) = delete;
  EmulatedModule& operator=(const EmulatedModule&) = delete;

  // The loaded shared object, and whether build() ran the compiler for it (false: cache hit).
  const std::string& library_path() const { return library_path_; }
  bool compiled() const { return compiled_; }

 private:
  using LaunchFn = const char* (*)(const void* config, void** args);

  EmulatedModule() = default;

  void* handle_ = nullptr;
  std::string library_path_;
  bool compiled_ = false;
  std::map<std::string, LaunchFn> kernels_;
};

}  // namespace fuserc::emu
