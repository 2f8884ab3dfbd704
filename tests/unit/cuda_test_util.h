// Shared by the GPU-path tests (fake driver here, the real one in tests/gpu/): a graph that
// uses every kind of argument and memory a plan has, compiled with NVRTC, and helpers to run a
// Plan on device buffers (allocated through the current driver table) and read back what it
// wrote, so that results can be compared with the reference interpreter.
#pragma once

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "codegen/compile_fusion.h"
#include "core/eval/interpreter.h"
#include "core/eval/random_inputs.h"
#include "runtime/api/package.h"
#include "runtime/api/plan.h"
#include "runtime/cuda/cuda_error.h"
#include "runtime/cuda/driver_api.h"
#include "serde/package_writer.h"
#include "test_util.h"

namespace fuserc::testing {

// A strided (transposed) input, an output written in place, f32 and i64 scalars, an
// intermediate in the workspace (segment_set), a grid reduction (partials and zeroed
// counters), an output that is an input, the same output twice. Three kernels: the sum reads
// es flattened (another domain than the pointwise kernel's), so it does not take y and p_new
// as side outputs of its pass.
inline const char* kMixGraph = R"({"fuserc": 1, "name": "runtime_mix",
 "symbols": {"N": {"hint": 300, "max": 100000}, "M": {"hint": 257, "max": 100000}},
 "inputs": [
  {"name": "x", "dtype": "f32", "shape": ["N", "M"], "strides": [1, "N"]},
  {"name": "p", "dtype": "f32", "shape": ["N", "M"]},
  {"name": "lr", "dtype": "f32"},
  {"name": "k", "dtype": "i64"}],
 "ops": [
  {"op": "mul", "args": ["x", "lr"], "out": "a"},
  {"op": "exp", "args": ["a"], "out": "e"},
  {"op": "segment_set", "args": ["e"], "out": "es"},
  {"op": "add", "args": ["es", "k"], "out": "y"},
  {"op": "reshape", "args": ["es"], "shape": [-1], "out": "ef"},
  {"op": "sum", "args": ["ef"], "dims": [0], "out": "s"},
  {"op": "mul", "args": ["es", "lr"], "out": "d"},
  {"op": "sub", "args": ["p", "d"], "out": "p_new"}],
 "outputs": ["y", "s", "p_new", "x", "y"],
 "aliases": {"p_new": "p"}})";

// The package bytes of `json` with cubins for `archs` (and the PTX of the lowest).
inline std::string compile_with_nvrtc(const std::string& json, std::vector<int> archs) {
  PassContext ctx;
  CompileOptions o;
  o.archs = std::move(archs);
  o.jobs = 2;
  return serialize_package(compile_fusion(parse_text(json), o, ctx), {});
}

inline const std::string& mix_package() {
  static const std::string bytes = compile_with_nvrtc(kMixGraph, {80, 90});
  return bytes;
}

// Device memory through the installed driver table, freed at scope exit.
class DeviceBuffers {
 public:
  ~DeviceBuffers() {
    for (auto p : owned_) cuda::driver().cuMemFree(p);
  }
  void* alloc(size_t bytes) {
    cuda::CUdeviceptr p = 0;
    cuda::check(cuda::driver().cuMemAlloc(&p, bytes ? bytes : 1), "test allocation");
    owned_.push_back(p);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }
  void* upload(const void* src, size_t bytes) {
    void* p = alloc(bytes);
    cuda::check(cuda::driver().cuMemcpyHtoD(reinterpret_cast<uintptr_t>(p), src, bytes), "copy");
    return p;
  }
  static void download(void* dst, const void* src, size_t bytes) {
    cuda::check(cuda::driver().cuMemcpyDtoH(dst, reinterpret_cast<uintptr_t>(src), bytes),
                "copy back");
  }

 private:
  std::vector<cuda::CUdeviceptr> owned_;
};

// An input laid out in `strides` (elements), as a caller with a strided tensor has it.
inline std::string strided_bytes(const HostTensor& t, const std::vector<int64_t>& strides) {
  size_t size = dtype_size(t.dtype());
  int64_t extent = t.numel() == 0 ? 0 : 1;
  for (int d = 0; d < t.rank(); ++d) extent += (t.shape()[d] - 1) * strides[d];
  std::string bytes(static_cast<size_t>(extent) * size, '\0');
  std::vector<int64_t> idx(t.rank(), 0);
  for (int64_t e = 0; e < t.numel(); ++e) {
    int64_t off = 0;
    for (int d = 0; d < t.rank(); ++d) off += idx[d] * strides[d];
    std::memcpy(bytes.data() + off * size, t.data() + e * size, size);
    for (int d = t.rank() - 1; d >= 0; --d) {
      if (++idx[d] < t.shape()[d]) break;
      idx[d] = 0;
    }
  }
  return bytes;
}

// The pointers of one run of a plan: inputs uploaded (in the layout the plan wants), an
// output buffer for every output (including those the plan only copies to). A scalar input is
// passed by its host address: `inputs` must outlive every launch with these buffers.
struct PlanBuffers {
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
  std::vector<std::vector<int64_t>> output_shapes;
};

inline PlanBuffers upload_inputs(const rt::Plan& plan, const TensorMap& inputs,
                                 DeviceBuffers& mem) {
  const fb::Metadata& m = plan.package_metadata();
  PlanBuffers b;
  for (uint32_t i = 0; i < m.inputs()->size(); ++i) {
    const fb::Tensor* t = m.inputs()->Get(i);
    const HostTensor& host = inputs.at(t->name()->str());
    if (t->scalar()) {
      b.inputs.push_back(host.data());
      continue;
    }
    std::string bytes = strided_bytes(host, plan.input_strides(i));
    b.inputs.push_back(mem.upload(bytes.data(), bytes.size()));
  }
  for (uint32_t j = 0; j < m.outputs()->size(); ++j) {
    const fb::Tensor* t = m.outputs()->Get(j);
    std::vector<int64_t> shape = plan.output_shape(j);
    HostTensor probe(static_cast<DType>(t->dtype()), shape);
    // An output that is a strided input's memory cannot be copied elsewhere.
    bool strided_input =
        t->source_input() >= 0 && m.inputs()->Get(t->source_input())->stride_slots()->size() > 0;
    b.outputs.push_back(strided_input ? nullptr : mem.alloc(probe.nbytes()));
    b.output_shapes.push_back(shape);
  }
  return b;
}

// Every output as the plan left it in `b.outputs` (in-place outputs from their input's buffer;
// one that is a strided input, which stays where it is, is skipped).
inline std::vector<std::pair<std::string, HostTensor>> download_outputs(const rt::Plan& plan,
                                                                        const PlanBuffers& b) {
  const fb::Metadata& m = plan.package_metadata();
  std::vector<std::pair<std::string, HostTensor>> out;
  for (uint32_t j = 0; j < m.outputs()->size(); ++j) {
    const fb::Tensor* t = m.outputs()->Get(j);
    if (t->alias_input() < 0 && !b.outputs[j]) continue;
    HostTensor host(static_cast<DType>(t->dtype()), b.output_shapes[j]);
    const void* src = t->alias_input() >= 0 ? b.inputs[t->alias_input()] : b.outputs[j];
    DeviceBuffers::download(host.data(), src, host.nbytes());
    out.emplace_back(t->name()->str(), std::move(host));
  }
  return out;
}

}  // namespace fuserc::testing
