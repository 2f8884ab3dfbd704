// The entry point of the GPU tests: without a usable CUDA driver and device they are skipped,
// saying why (exit status 77, which CTest reports as a skip); otherwise Catch2 runs them.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "runtime/cuda/cuda_error.h"
#include "runtime/cuda/driver_api.h"

int main(int argc, char** argv) {
  std::string why;
  int devices = 0;
  if (fuserc::cuda::driver_available(&why) &&
      fuserc::cuda::driver().cuDeviceGetCount(&devices) == 0 && devices == 0)
    why = "the CUDA driver sees no device";
  if (!why.empty()) {
    std::printf("SKIPPED: the GPU tests need a GPU: %s\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
