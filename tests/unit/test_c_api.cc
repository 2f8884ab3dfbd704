// The C interface (fuserc_runtime.h): every failure is a status plus a one-line message for
// the calling thread, queries describe the package as a binding needs, and the GPU calls work
// through the fake driver exactly as the C++ API does.
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>

#include "cuda_test_util.h"
#include "fake_driver.h"
#include "fuserc_runtime.h"
#include "runtime/package_report.h"
#include "tensor_compare.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

// The mix graph's package, loaded through the C interface (the bytes outlive it).
fuserc_package* load_mix() {
  fuserc_package* p = nullptr;
  REQUIRE(fuserc_package_load_bytes(mix_package().data(), mix_package().size(), 0, nullptr, &p) ==
          FUSERC_OK);
  return p;
}

std::string last_error() {
  return fuserc_last_error();
}

}  // namespace

TEST_CASE("the C interface reports failures as a status and a message", "[c_api]") {
  CHECK(std::string(fuserc_version()).size() > 0);
  CHECK(fuserc_abi_version() == FUSERC_RUNTIME_ABI_VERSION);
  CHECK(std::string(fuserc_status_name(FUSERC_ERROR_SHAPE)) == "FUSERC_ERROR_SHAPE");
  CHECK(std::string(fuserc_status_name(FUSERC_ERROR_NO_LIBRARY)) == "FUSERC_ERROR_NO_LIBRARY");
  CHECK(FUSERC_ERROR_NO_LIBRARY == 10);

  fuserc_package* p = nullptr;
  CHECK(fuserc_package_load("/nonexistent/model.fpkg", nullptr, &p) == FUSERC_ERROR_PACKAGE);
  CHECK(p == nullptr);
  CHECK(last_error().find("/nonexistent/model.fpkg") == 0);
  CHECK(fuserc_package_load_bytes("garbage!", 8, 1, nullptr, &p) == FUSERC_ERROR_PACKAGE);
  CHECK(last_error().find("not a fuserc package") != std::string::npos);
  CHECK(fuserc_package_load(nullptr, nullptr, &p) == FUSERC_ERROR_INVALID_ARGUMENT);
  CHECK(last_error() == "fuserc_package_load: path is NULL");

  p = load_mix();
  fuserc_tensor_info t;
  CHECK(fuserc_package_input(p, 4, &t) == FUSERC_ERROR_INVALID_ARGUMENT);
  CHECK(last_error() == "fuserc_package_input: index 4 out of range (4)");
  CHECK(fuserc_package_output(nullptr, 0, &t) == FUSERC_ERROR_INVALID_ARGUMENT);
  fuserc_plan* plan = nullptr;
  int64_t two[1] = {3};
  CHECK(fuserc_bind(p, two, 1, &plan) == FUSERC_ERROR_SHAPE);
  CHECK(last_error() == "<memory>: 1 symbol values for 2 symbols");
  int64_t out_of_range[2] = {257, 0};  // M, N
  CHECK(fuserc_bind(p, out_of_range, 2, &plan) == FUSERC_ERROR_SHAPE);
  CHECK(last_error() == "<memory>: symbol 'N' = 0 is outside its range [1, 100000]");
  int64_t xs[2] = {300, 257}, ps[2] = {300, 256};
  const int64_t* shapes[4] = {xs, ps, nullptr, nullptr};
  int32_t ranks[4] = {2, 2, 0, 0};
  CHECK(fuserc_bind_shapes(p, shapes, ranks, 4, &plan) == FUSERC_ERROR_SHAPE);
  CHECK(last_error() ==
        "<memory>: symbol 'M' is bound to two sizes: 257 by input 'x' dimension 1 and 256 by "
        "input 'p' dimension 1");
  ranks[2] = 1;
  CHECK(fuserc_bind_shapes(p, shapes, ranks, 4, &plan) == FUSERC_ERROR_INVALID_ARGUMENT);
  CHECK(last_error() == "fuserc_bind_shapes: input 2 has rank 1 and no shape");
  CHECK(fuserc_launch(nullptr, nullptr, nullptr, nullptr, nullptr, 0) ==
        FUSERC_ERROR_INVALID_ARGUMENT);

  // The message belongs to the thread whose call failed.
  std::thread([] {
    fuserc_package* q = nullptr;
    fuserc_package_load("/elsewhere.fpkg", nullptr, &q);
  }).join();
  CHECK(last_error() == "fuserc_launch: plan is NULL");
  fuserc_package_free(p);
}

TEST_CASE("the C interface describes inputs, outputs and symbols", "[c_api]") {
  fuserc_package* p = load_mix();
  CHECK(std::string(fuserc_package_name(p)) == "runtime_mix");
  REQUIRE(fuserc_package_num_symbols(p) == 2);
  fuserc_symbol_info s;
  REQUIRE(fuserc_package_symbol(p, 1, &s) == FUSERC_OK);
  CHECK(std::string(s.name) == "N");
  CHECK((s.min == 1 && s.max == 100000 && s.hint == 300));
  REQUIRE(fuserc_package_num_inputs(p) == 4);
  REQUIRE(fuserc_package_num_outputs(p) == 5);
  fuserc_tensor_info t;
  REQUIRE(fuserc_package_input(p, 0, &t) == FUSERC_OK);
  CHECK(std::string(t.name) == "x");
  CHECK((t.dtype == FUSERC_F32 && t.rank == 2 && t.has_strides == 1 && t.is_scalar == 0));
  CHECK((t.dim_symbol[0] == 1 && t.dim_symbol[1] == 0));  // N, M
  CHECK(std::string(t.dim_formula[0]) == "N");
  REQUIRE(fuserc_package_input(p, 3, &t) == FUSERC_OK);
  CHECK((std::string(t.name) == "k" && t.dtype == FUSERC_I64 && t.is_scalar == 1 && t.rank == 0));
  REQUIRE(fuserc_package_output(p, 1, &t) == FUSERC_OK);
  CHECK((std::string(t.name) == "s" && t.rank == 0));
  REQUIRE(fuserc_package_output(p, 2, &t) == FUSERC_OK);
  CHECK((std::string(t.name) == "p_new" && t.in_place_of == 1 && t.source_input == -1));
  REQUIRE(fuserc_package_output(p, 3, &t) == FUSERC_OK);
  CHECK((std::string(t.name) == "x" && t.source_input == 0 && t.in_place_of == -1));
  fuserc_package_free(p);
}

TEST_CASE("the C interface binds and launches through the driver", "[c_api]") {
  FakeDriver fake;
  fuserc_package* p = load_mix();
  Fusion f = parse_text(kMixGraph);
  TensorMap inputs = make_random_inputs(f, {{"N", 50}, {"M", 33}}, 9);
  std::map<std::string, HostTensor> want;
  for (auto& [name, t] : evaluate_fusion(f, inputs, "in")) want.emplace(name, t);

  int64_t xs[2] = {50, 33};
  const int64_t* shapes[4] = {xs, xs, nullptr, nullptr};
  int32_t ranks[4] = {2, 2, 0, 0};
  fuserc_plan* plan = nullptr;
  REQUIRE(fuserc_bind_shapes(p, shapes, ranks, 4, &plan) == FUSERC_OK);
  int64_t symbols[2];
  REQUIRE(fuserc_plan_symbol_values(plan, symbols) == FUSERC_OK);
  CHECK((symbols[0] == 33 && symbols[1] == 50));
  int64_t strides[2];
  REQUIRE(fuserc_plan_input_strides(plan, 0, strides) == FUSERC_OK);
  CHECK((strides[0] == 1 && strides[1] == 50));
  CHECK(fuserc_plan_num_kernel_launches(plan) == 3);
  CHECK(fuserc_plan_input_shape(plan, 9, strides) == FUSERC_ERROR_INVALID_ARGUMENT);

  // Buffers through the C helpers; the plan runs in the emulator behind the fake driver.
  Executable exe(PackageView::from_bytes(mix_package(), "mix.fpkg"));
  fake.register_package(exe, true);
  std::string x = strided_bytes(inputs.at("x"), {1, 50});
  void *dx = nullptr, *dp = nullptr, *dy = nullptr, *ds = nullptr, *ws = nullptr;
  REQUIRE(fuserc_device_malloc(x.size(), &dx) == FUSERC_OK);
  REQUIRE(fuserc_device_malloc(inputs.at("p").nbytes(), &dp) == FUSERC_OK);
  REQUIRE(fuserc_device_malloc(50 * 33 * 4, &dy) == FUSERC_OK);
  REQUIRE(fuserc_device_malloc(4, &ds) == FUSERC_OK);
  REQUIRE(fuserc_device_malloc(fuserc_plan_workspace_bytes(plan), &ws) == FUSERC_OK);
  REQUIRE(fuserc_copy_to_device(dx, x.data(), x.size()) == FUSERC_OK);
  REQUIRE(fuserc_copy_to_device(dp, inputs.at("p").data(), inputs.at("p").nbytes()) == FUSERC_OK);
  const void* in[4] = {dx, dp, inputs.at("lr").data(), inputs.at("k").data()};
  void* out[5] = {dy, ds, nullptr, nullptr, nullptr};
  CHECK(fuserc_launch(plan, nullptr, in, out, ws, 16) == FUSERC_ERROR_INVALID_ARGUMENT);
  int64_t wrong[2] = {33, 1};
  const int64_t* in_strides[4] = {wrong, nullptr, nullptr, nullptr};
  CHECK(fuserc_launch_strided(plan, nullptr, in, in_strides, out, ws,
                              fuserc_plan_workspace_bytes(plan)) == FUSERC_ERROR_INVALID_ARGUMENT);
  CHECK(fake.launches.empty());
  REQUIRE(fuserc_launch(plan, nullptr, in, out, ws, fuserc_plan_workspace_bytes(plan)) ==
          FUSERC_OK);
  REQUIRE(fuserc_stream_synchronize(nullptr) == FUSERC_OK);
  HostTensor y(DType::F32, {50, 33}), s(DType::F32, {}), p_new(DType::F32, {50, 33});
  REQUIRE(fuserc_copy_to_host(y.data(), dy, y.nbytes()) == FUSERC_OK);
  REQUIRE(fuserc_copy_to_host(s.data(), ds, 4) == FUSERC_OK);
  REQUIRE(fuserc_copy_to_host(p_new.data(), dp, p_new.nbytes()) == FUSERC_OK);
  CHECK(compare_tensors(y, want.at("y")) == "");
  CHECK(compare_tensors(s, want.at("s")) == "");
  CHECK(compare_tensors(p_new, want.at("p_new")) == "");

  // Graphs: not on the legacy stream; on another, one capture replays the three kernels.
  fuserc_graph* g = nullptr;
  CHECK(fuserc_graph_capture(plan, nullptr, in, out, ws, fuserc_plan_workspace_bytes(plan), &g) ==
        FUSERC_ERROR_INVALID_ARGUMENT);
  cuda::CUstream stream = nullptr;
  fake.table().cuStreamCreate(&stream, 0);
  REQUIRE(fuserc_graph_capture(plan, stream, in, out, ws, fuserc_plan_workspace_bytes(plan), &g) ==
          FUSERC_OK);
  REQUIRE(fuserc_graph_launch(g, stream) == FUSERC_OK);
  CHECK(fake.launches.size() == 6);
  fuserc_graph_free(g);

  // Device failures keep their kind.
  fake.fail_next_alloc = cuda::CUDA_ERROR_OUT_OF_MEMORY;
  void* big = nullptr;
  CHECK(fuserc_device_malloc(1 << 20, &big) == FUSERC_ERROR_OUT_OF_MEMORY);
  CHECK(last_error() == "allocating 1048576 B: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  for (void* ptr : {dx, dp, dy, ds, ws}) CHECK(fuserc_device_free(ptr) == FUSERC_OK);
  fuserc_plan_free(plan);
  fuserc_package_free(p);
}

TEST_CASE("the C interface says when the device has no code of the package", "[c_api]") {
  FakeDeviceSpec old;
  old.cc_major = 7;
  old.cc_minor = 0;
  FakeDriver fake(old);
  fuserc_package* p = load_mix();
  int64_t symbols[2] = {3, 4};  // too small for tiles: the pointwise variant of k0
  fuserc_plan* plan = nullptr;
  CHECK(fuserc_bind(p, symbols, 2, &plan) == FUSERC_ERROR_NO_COMPATIBLE_KERNEL);
  CHECK(last_error() ==
        "<memory>: kernel runtime_mix_k0_i32 needs compute capability 7.5 or newer; the device "
        "is Fake GPU (sm_70) (the package has sm_80, sm_90, PTX for compute_80)");
  CHECK(fuserc_driver_check(0) == FUSERC_OK);
  CHECK(fuserc_driver_check(1) == FUSERC_ERROR_NO_DEVICE);
  CHECK(last_error() == "no CUDA device 1 (1 visible)");
  fuserc_package_free(p);
}

TEST_CASE("the C interface runs a package in the CPU emulator on host memory", "[c_api]") {
  // The fake driver is installed only to prove that the emulator never touches a driver.
  FakeDriver fake;
  fuserc_load_options options{FUSERC_DEVICE_EMULATOR, nullptr};
  fuserc_package* p = nullptr;
  REQUIRE(fuserc_package_load_bytes(mix_package().data(), mix_package().size(), 0, &options, &p) ==
          FUSERC_OK);
  CHECK(fuserc_package_is_emulated(p) == 1);
  Fusion f = parse_text(kMixGraph);
  TensorMap inputs = make_random_inputs(f, {{"N", 37}, {"M", 70}}, 4);
  std::map<std::string, HostTensor> want;
  for (auto& [name, t] : evaluate_fusion(f, inputs, "in")) want.emplace(name, t);

  int64_t xs[2] = {37, 70};
  const int64_t* shapes[4] = {xs, xs, nullptr, nullptr};
  int32_t ranks[4] = {2, 2, 0, 0};
  fuserc_plan* plan = nullptr;
  REQUIRE(fuserc_bind_shapes(p, shapes, ranks, 4, &plan) == FUSERC_OK);
  CHECK(fuserc_plan_num_kernel_launches(plan) == 3);
  int64_t strides[2];
  REQUIRE(fuserc_plan_input_strides(plan, 0, strides) == FUSERC_OK);
  CHECK((strides[0] == 1 && strides[1] == 37));

  // Host buffers: x transposed in memory, p updated in place, y and s fresh; the output that
  // is the strided input x (index 3) stays in x; the second listing of y is copied.
  std::string x = strided_bytes(inputs.at("x"), {1, 37});
  HostTensor p_buf = inputs.at("p");
  HostTensor y(DType::F32, {37, 70}), s(DType::F32, {}), y2(DType::F32, {37, 70});
  const void* in[4] = {x.data(), p_buf.data(), inputs.at("lr").data(), inputs.at("k").data()};
  void* out[5] = {y.data(), s.data(), nullptr, nullptr, y2.data()};
  CHECK(fuserc_launch(plan, reinterpret_cast<void*>(1), in, out, nullptr, 0) ==
        FUSERC_ERROR_INVALID_ARGUMENT);
  CHECK(last_error() ==
        "<memory>: this package runs in the CPU emulator: pass a NULL stream and host memory");
  int64_t wrong[2] = {70, 1};
  const int64_t* in_strides[4] = {wrong, nullptr, nullptr, nullptr};
  CHECK(fuserc_launch_strided(plan, nullptr, in, in_strides, out, nullptr, 0) ==
        FUSERC_ERROR_INVALID_ARGUMENT);
  CHECK(last_error() ==
        "<memory>: input 'x' has strides [70, 1] but the package needs [1, 37] (copy it to that "
        "layout first)");
  // Twice: the zeroed counters of the grid reduction are reused, and p moves on each time.
  std::string want_x = x;
  for (int run = 0; run < 2; ++run) {
    REQUIRE(fuserc_launch(plan, nullptr, in, out, nullptr, 0) == FUSERC_OK);
    CHECK(compare_tensors(y, want.at("y")) == "");
    CHECK(compare_tensors(y2, want.at("y")) == "");
    CHECK(compare_tensors(s, want.at("s")) == "");
    CHECK(x == want_x);
    if (run == 0) {
      CHECK(compare_tensors(p_buf, want.at("p_new")) == "");
      // The second run starts from the updated p.
      TensorMap again = inputs;
      again.insert_or_assign("p", p_buf);
      want.clear();
      for (auto& [name, t] : evaluate_fusion(f, again, "in")) want.emplace(name, t);
    } else {
      CHECK(compare_tensors(p_buf, want.at("p_new")) == "");
    }
  }
  // A caller's workspace works the same; one too small is refused.
  std::vector<uint8_t> ws(fuserc_plan_workspace_bytes(plan) + 256);
  void* ws_aligned = ws.data() + (256 - reinterpret_cast<uintptr_t>(ws.data()) % 256) % 256;
  CHECK(fuserc_launch(plan, nullptr, in, out, ws_aligned, 8) == FUSERC_ERROR_INVALID_ARGUMENT);
  REQUIRE(fuserc_launch(plan, nullptr, in, out, ws_aligned, fuserc_plan_workspace_bytes(plan)) ==
          FUSERC_OK);
  CHECK(compare_tensors(s, want.at("s")) == "");

  fuserc_graph* g = nullptr;
  CHECK(fuserc_graph_capture(plan, nullptr, in, out, nullptr, 0, &g) ==
        FUSERC_ERROR_INVALID_ARGUMENT);
  CHECK(last_error() == "<memory>: CUDA graphs need a GPU; this package runs in the CPU emulator");
  CHECK(fake.launches.empty());
  CHECK((fake.allocations == 0 && fake.primary_retains == 0 && fake.memsets == 0));
  fuserc_plan_free(plan);
  fuserc_package_free(p);

  // Loaded for a GPU, the same package says it is not emulated.
  p = load_mix();
  CHECK(fuserc_package_is_emulated(p) == 0);
  fuserc_package_free(p);
}

TEST_CASE("the C interface gives what fuserc inspect --json prints", "[c_api]") {
  fuserc_package* p = load_mix();
  Executable exe(PackageView::from_bytes(mix_package(), "<memory>"));
  size_t length = 0;
  REQUIRE(fuserc_package_inspect_json(p, nullptr, 0, nullptr, 0, &length) == FUSERC_OK);
  std::string unbound(length, '\0');
  char small[8] = "unset";
  REQUIRE(fuserc_package_inspect_json(p, nullptr, 0, small, sizeof small, &length) == FUSERC_OK);
  CHECK(std::string(small) == "unset");  // too small: nothing written
  REQUIRE(fuserc_package_inspect_json(p, nullptr, 0, unbound.data(), length + 1, &length) ==
          FUSERC_OK);
  CHECK(unbound == package_json(exe, nullptr).dump(2));
  CHECK(nlohmann::json::parse(unbound)["name"] == "runtime_mix");

  int64_t values[2] = {64, 33};  // M, N
  REQUIRE(fuserc_package_inspect_json(p, values, 2, nullptr, 0, &length) == FUSERC_OK);
  std::string bound(length, '\0');
  REQUIRE(fuserc_package_inspect_json(p, values, 2, bound.data(), length + 1, &length) ==
          FUSERC_OK);
  CHECK(bound == package_json(exe, exe.bind({64, 33}).get()).dump(2));
  CHECK(nlohmann::json::parse(bound).contains("bound"));

  CHECK(fuserc_package_inspect_json(p, values, 1, nullptr, 0, &length) == FUSERC_ERROR_SHAPE);
  CHECK(last_error() == "<memory>: 1 symbol values for 2 symbols");
  int64_t bad[2] = {64, 0};
  CHECK(fuserc_package_inspect_json(p, bad, 2, nullptr, 0, &length) == FUSERC_ERROR_SHAPE);
  CHECK(last_error() == "<memory>: symbol 'N' = 0 is outside its range [1, 100000]");
  CHECK(fuserc_package_inspect_json(nullptr, nullptr, 0, nullptr, 0, &length) ==
        FUSERC_ERROR_INVALID_ARGUMENT);
  fuserc_package_free(p);
}

TEST_CASE("the C interface refuses misaligned and overlapping buffers before any launch",
          "[c_api]") {
  fuserc_load_options options{FUSERC_DEVICE_EMULATOR, nullptr};
  fuserc_package* p = nullptr;
  REQUIRE(fuserc_package_load_bytes(mix_package().data(), mix_package().size(), 0, &options, &p) ==
          FUSERC_OK);
  Fusion f = parse_text(kMixGraph);
  TensorMap inputs = make_random_inputs(f, {{"N", 37}, {"M", 70}}, 4);
  int64_t xs[2] = {37, 70};
  const int64_t* shapes[4] = {xs, xs, nullptr, nullptr};
  int32_t ranks[4] = {2, 2, 0, 0};
  fuserc_plan* plan = nullptr;
  REQUIRE(fuserc_bind_shapes(p, shapes, ranks, 4, &plan) == FUSERC_OK);
  std::string x = strided_bytes(inputs.at("x"), {1, 37});
  HostTensor p_buf = inputs.at("p");
  const HostTensor p_before = p_buf;
  HostTensor y(DType::F32, {37, 70}), s(DType::F32, {}), y2(DType::F32, {37, 70});
  uint8_t* yb = y.data();
  uint8_t* pb = p_buf.data();
  auto refused = [&](const void* const* in, void* const* out, void* ws, const std::string& want) {
    INFO(want);
    CHECK(fuserc_launch(plan, nullptr, in, out, ws, ws ? 1 << 30 : 0) ==
          FUSERC_ERROR_INVALID_ARGUMENT);
    CHECK(last_error().find(want) != std::string::npos);
    CHECK(last_error().find('\n') == std::string::npos);
  };
  const void* in[4] = {x.data(), p_buf.data(), inputs.at("lr").data(), inputs.at("k").data()};
  {
    void* out[5] = {yb + 2, s.data(), nullptr, nullptr, y2.data()};
    refused(in, out, nullptr, "output 'y' at 0x");
    refused(in, out, nullptr, "is not aligned to its 4-byte elements");
  }
  {
    void* out[5] = {x.data(), s.data(), nullptr, nullptr, y2.data()};
    refused(in, out, nullptr, "output 'y' overlaps the memory of input 'x'");
  }
  {
    void* out[5] = {y.data(), yb + 4 * 100, nullptr, nullptr, y2.data()};
    refused(in, out, nullptr, "output 's' overlaps the memory of output 'y'");
  }
  {
    void* out[5] = {y.data(), s.data(), pb + 4, nullptr, y2.data()};
    refused(in, out, nullptr, "output 'p_new' overlaps the memory of input 'p'");
  }
  {
    // x (read) lies in p, which the plan writes in place.
    const void* aliased[4] = {p_buf.data(), p_buf.data(), in[2], in[3]};
    void* out[5] = {y.data(), s.data(), nullptr, nullptr, y2.data()};
    refused(aliased, out, nullptr,
            "input 'p', which is written in place, overlaps the memory of "
            "input 'x'");
  }
  {
    std::vector<uint8_t> ws(fuserc_plan_workspace_bytes(plan) + 64);
    uint8_t* misaligned = ws.data() + (16 - reinterpret_cast<uintptr_t>(ws.data()) % 16) % 16 + 8;
    void* out[5] = {y.data(), s.data(), nullptr, nullptr, y2.data()};
    refused(in, out, misaligned, "the workspace at 0x");
    refused(in, out, misaligned, "is not 16-byte aligned");
  }
  // Nothing ran: p is as it was.
  CHECK(compare_tensors(p_buf, p_before) == "");
  // The same memory by design is accepted: p_new at p, the output x at x, y listed twice at
  // one address.
  void* out[5] = {y.data(), s.data(), p_buf.data(), x.data(), y.data()};
  CHECK(fuserc_launch(plan, nullptr, in, out, nullptr, 0) == FUSERC_OK);
  fuserc_plan_free(plan);
  fuserc_package_free(p);
}

TEST_CASE("the C interface refuses every truncation of a package", "[c_api]") {
  const std::string& bytes = mix_package();
  for (size_t len = 0; len < bytes.size(); len += 1 + len / 8) {
    INFO("truncated to " << len << " bytes");
    fuserc_package* p = nullptr;
    CHECK(fuserc_package_load_bytes(bytes.data(), len, 1, nullptr, &p) == FUSERC_ERROR_PACKAGE);
    CHECK(p == nullptr);
    CHECK(last_error().find("<memory>: ") == 0);
  }
}
