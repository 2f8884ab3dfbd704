// A whole attention layer through the GPU runtime without a GPU: kernels on the fake driver
// (run in the emulator), the products on the fake cuBLASLt (which rebuilds each product from
// the descriptors the runtime set and runs it), the slices, head splits and the transpose of K
// read in place, the permute of the heads merged back written through strides. The outputs
// equal the interpreter's only if the plan's order, the operands' pointers (the slices'
// offsets), strides and the workspace are all right; also as a captured CUDA graph.
#include <catch2/catch.hpp>

#include "cuda_test_util.h"
#include "fake_cublaslt.h"
#include "fake_driver.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/run_package.h"
#include "tensor_compare.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

const char* kAttention = R"({"fuserc": 1, "name": "attn",
 "symbols": {"B": {"hint": 2, "max": 8}, "S": {"hint": 16, "max": 256}},
 "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", "S", 32]},
            {"name": "w_qkv", "dtype": "f32", "shape": [96, 32]},
            {"name": "b_qkv", "dtype": "f32", "shape": [96]},
            {"name": "w_o", "dtype": "f32", "shape": [32, 32]}],
 "ops": [
  {"op": "linear", "args": ["x", "w_qkv", "b_qkv"], "out": "qkv"},
  {"op": "slice", "args": ["qkv"], "starts": [0, 0, 0], "ends": ["B", "S", 32], "out": "q0"},
  {"op": "slice", "args": ["qkv"], "starts": [0, 0, 32], "ends": ["B", "S", 64], "out": "k0"},
  {"op": "slice", "args": ["qkv"], "starts": [0, 0, 64], "ends": ["B", "S", 96], "out": "v0"},
  {"op": "reshape", "args": ["q0"], "shape": ["B", "S", 4, 8], "out": "q1"},
  {"op": "permute", "args": ["q1"], "dims": [0, 2, 1, 3], "out": "q"},
  {"op": "reshape", "args": ["k0"], "shape": ["B", "S", 4, 8], "out": "k1"},
  {"op": "permute", "args": ["k1"], "dims": [0, 2, 3, 1], "out": "kt"},
  {"op": "reshape", "args": ["v0"], "shape": ["B", "S", 4, 8], "out": "v1"},
  {"op": "permute", "args": ["v1"], "dims": [0, 2, 1, 3], "out": "v"},
  {"op": "matmul", "args": ["q", "kt"], "out": "s0"},
  {"op": "mul", "args": ["s0", 0.35], "out": "s"},
  {"op": "amax", "args": ["s"], "dims": [-1], "keepdim": true, "out": "mx"},
  {"op": "sub", "args": ["s", "mx"], "out": "z"},
  {"op": "exp", "args": ["z"], "out": "e"},
  {"op": "sum", "args": ["e"], "dims": [-1], "keepdim": true, "out": "se"},
  {"op": "div", "args": ["e", "se"], "out": "p"},
  {"op": "matmul", "args": ["p", "v"], "out": "o"},
  {"op": "permute", "args": ["o"], "dims": [0, 2, 1, 3], "out": "o1"},
  {"op": "reshape", "args": ["o1"], "shape": ["B", "S", 32], "out": "o2"},
  {"op": "linear", "args": ["o2", "w_o"], "out": "proj"},
  {"op": "add", "args": ["x", "proj"], "out": "y"}],
 "outputs": ["y"]})";

}  // namespace

TEST_CASE("an attention layer runs through the GPU runtime: kernels and library steps",
          "[cublaslt][cuda_fake]") {
  FakeDriver fd;
  FakeCublasLt lt{fd};
  static const std::string bytes = compile_with_nvrtc(kAttention, {80});
  auto pkg = rt::Package::from_bytes(bytes, "attn.fpkg");
  fd.register_package(pkg->executable(), true);
  // Four products, a kernel for the softmax and one for the residual: nothing copies a view.
  const fb::Metadata& m = pkg->executable().metadata();
  REQUIRE(m.matmuls()->size() == 4);
  CHECK(m.plan()->size() == 6);

  Fusion f = parse_text(kAttention);
  for (int64_t s : {16, 37}) {
    INFO("S = " << s);
    TensorMap inputs = make_random_inputs(f, {{"B", 2}, {"S", s}}, 11 + static_cast<uint64_t>(s));
    auto want = evaluate_fusion(f, inputs, "inputs");
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& spec : pkg->executable().input_specs())
      shapes.push_back(inputs.at(spec.name).shape());
    auto plan = pkg->bind_shapes(shapes);
    DeviceBuffers mem;
    PlanBuffers b = upload_inputs(*plan, inputs, mem);
    const size_t before = lt.matmuls.size();
    plan->launch(nullptr, b.inputs.data(), b.outputs.data());
    // One library call per product (the heads are a strided batch; B is outer calls where the
    // batch dimensions need two levels).
    CHECK(lt.matmuls.size() > before);
    auto got = download_outputs(*plan, b);
    REQUIRE(got.size() == 1);
    CHECK(compare_tensors(got[0].second, want[0].second) == "");

    // The same plan captured into a CUDA graph: nothing runs until it is replayed.
    PlanBuffers b2 = upload_inputs(*plan, inputs, mem);
    cuda::CUstream stream = nullptr;
    fd.table().cuStreamCreate(&stream, cuda::kStreamNonBlocking);
    auto graph = plan->capture(stream, b2.inputs.data(), b2.outputs.data());
    graph->launch(stream);
    CHECK(compare_tensors(download_outputs(*plan, b2)[0].second, want[0].second) == "");

    // `fuserc run`'s path: run_package on the CUDA device frees all it allocated.
    Executable exe(PackageView::from_bytes(bytes, "attn.fpkg"));
    cuda::CudaDevice device;
    auto ran = run_package(exe, device, inputs, "in.safetensors");
    REQUIRE(ran.size() == 1);
    CHECK(compare_tensors(ran[0].second, want[0].second) == "");
  }
}
