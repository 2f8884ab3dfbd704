// Owns `fuserc bench PACKAGE.fpkg --gpu`: timing a package's kernels on a GPU through the
// runtime's own Plan (the embedding API's hot path). CUDA events around each kernel alone and
// around the whole plan (after a warm-up, the median of many runs), the plan replayed as a
// CUDA graph, the achieved bandwidth (bytes of the inputs read once and the outputs written
// once, over the time; per kernel: the bytes of the buffers it reads and writes), and the host
// time a launch costs (per plan and per kernel, and per graph launch).
#pragma once

#include <map>
#include <string>

namespace fuserc::cmd {

struct GpuBenchOptions {
  std::string package;
  std::map<std::string, int64_t> bind;  // symbol values (the hints for the others)
  std::string inputs;                   // a safetensors file to take the inputs from, or ""
  int runs = 100;
  int warmup = 10;
  int device = 0;
  bool json = false;
};

void run_gpu_bench(const GpuBenchOptions& options);

}  // namespace fuserc::cmd
