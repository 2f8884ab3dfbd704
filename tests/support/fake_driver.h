// Owns a fake CUDA driver for tests and CPU-only benchmarks: a complete DriverApi table
// (runtime/cuda/driver_api.h) over host memory, installed for the lifetime of a FakeDriver.
// It records what the runtime asks of the driver (allocations, copies, module loads and which
// image each was, JIT links, attributes, launches, synchronisations, captures) and can make
// launches real by running the kernels of registered packages in the CPU emulator, so a whole
// GPU path (bind, workspace, counters, arguments, graphs) is checked against the interpreter
// without a GPU. Device memory is host memory filled with 0xA5 when allocated, so a runtime
// that forgets to zero something sees garbage, as on a GPU.
//
// Streams run in order and synchronously; a stream being captured records launches, memsets
// and copies into the graph instead, and launching the graph replays them. Kernel parameters
// are copied as 8-byte slots (the runtime's parameter storage). One FakeDriver at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cuda/driver_api.h"
#include "runtime/device.h"
#include "runtime/emulator_device.h"
#include "runtime/executable.h"

namespace fuserc::testing {

struct FakeDeviceSpec {
  std::string name = "Fake GPU";
  int cc_major = 9, cc_minor = 0;
  int sm_count = 132;
  int shared_per_block = 48 * 1024;
  int shared_per_block_optin = 227 * 1024;
  int devices = 1;
};

struct FakeLaunch {
  std::string kernel;
  LaunchDims dims;
  cuda::CUstream stream = nullptr;
};

class FakeDriver {
 public:
  explicit FakeDriver(FakeDeviceSpec spec = {});
  ~FakeDriver();
  FakeDriver(const FakeDriver&) = delete;
  FakeDriver& operator=(const FakeDriver&) = delete;

  const cuda::DriverApi& table() const { return table_; }
  const FakeDeviceSpec& spec() const { return spec_; }

  // Lets module loads be identified (which cubin, or the PTX) and, with `execute`, runs the
  // package's kernels in the CPU emulator when launched.
  void register_package(const Executable& exe, bool execute);

  // What happened (counts since construction).
  int allocations = 0, frees = 0, syncs = 0, memsets = 0, copies = 0;
  int primary_retains = 0, primary_releases = 0;
  int jit_links = 0;
  std::vector<std::string> loaded_images;  // "sm_90 cubin of k", "JIT(sm_100) of k"
  std::vector<std::pair<std::string, int>> shared_attributes;  // kernel, bytes
  std::vector<FakeLaunch> launches;
  size_t live_bytes() const;

  // False: launches are not recorded in `launches` (benchmarks of the runtime's own cost).
  bool record_launches = true;

  // Injected failures: the next launch / allocation returns this (then resets to success).
  cuda::CUresult fail_next_launch = cuda::CUDA_SUCCESS;
  cuda::CUresult fail_next_alloc = cuda::CUDA_SUCCESS;

  // The calling thread's current context (what cuCtxGetCurrent returns), for tests that
  // pretend a framework made one current; and a context of its own to hand to the runtime.
  void set_current(cuda::CUcontext c);
  cuda::CUcontext user_context() const;

  // Runs `step` on stream `s` as the fake's own work is: now, or recorded into the graph when
  // the stream is being captured (for fakes of libraries that enqueue work, fake_cublaslt.h).
  cuda::CUresult enqueue(cuda::CUstream s, std::function<void()> step);

  // Implementation, used by the table's functions.
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  FakeDeviceSpec spec_;
  cuda::DriverApi table_{};
  std::unique_ptr<Impl> impl_;
};

}  // namespace fuserc::testing
