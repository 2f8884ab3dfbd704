// The example application: loads the package its build compiled (fuserc_add_package in
// CMakeLists.txt) through fuserc::runtime (libfuserc.so, fuserc_runtime.h), prints its symbols,
// inputs and outputs, binds N, runs y = gelu(x + bias) on a fixed pattern and checks y against
// the same formula computed here. It runs on GPU 0 when there is a CUDA driver and a device;
// otherwise it says why and runs in fuserc's CPU emulator (no driver needed; the first run
// compiles the kernel with the host C++ compiler, later runs reuse it from the cache).
//
//   bias_gelu_app [--emulate] [PACKAGE.fpkg] [N]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuserc_runtime.h"

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "bias_gelu_app: %s: %s\n", what, fuserc_last_error());
  return 1;
}

uint16_t to_bf16(float f) {  // round to nearest even (finite values)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float gelu_tanh(float v) {
  return 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
}

}  // namespace

int main(int argc, char** argv) {
  bool emulate = false;
  std::vector<const char*> args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--emulate") == 0)
      emulate = true;
    else
      args.push_back(argv[i]);
  }
  const char* path = args.size() > 0 ? args[0] : BIAS_GELU_PACKAGE;
  const int64_t n_rows = args.size() > 1 ? std::atoll(args[1]) : 16;

  std::printf("fuserc runtime %s\n", fuserc_version());
  fuserc_load_options options{};
  if (!emulate && fuserc_driver_check(0) != FUSERC_OK) {
    std::printf("no GPU (%s): running in the CPU emulator\n", fuserc_last_error());
    emulate = true;
  }
  options.device = emulate ? FUSERC_DEVICE_EMULATOR : 0;
  fuserc_package* pkg = nullptr;
  if (fuserc_package_load(path, &options, &pkg) != FUSERC_OK) return fail("loading");

  const int32_t ns = fuserc_package_num_symbols(pkg);
  const int32_t ni = fuserc_package_num_inputs(pkg);
  const int32_t no = fuserc_package_num_outputs(pkg);
  std::printf("%s: %d symbols, %d inputs, %d outputs\n", fuserc_package_name(pkg), ns, ni, no);
  if (ns != 1 || ni != 2 || no != 1) {
    std::fprintf(stderr, "bias_gelu_app: not the bias_gelu package\n");
    return 1;
  }
  for (int32_t i = 0; i < ni + no; ++i) {
    fuserc_tensor_info t;
    if ((i < ni ? fuserc_package_input(pkg, i, &t) : fuserc_package_output(pkg, i - ni, &t)) !=
        FUSERC_OK)
      return fail("querying");
    std::string shape;
    for (int32_t d = 0; d < t.rank; ++d) shape += (d ? ", " : "") + std::string(t.dim_formula[d]);
    std::printf("  %s %s [%s]\n", i < ni ? "input " : "output", t.name, shape.c_str());
  }

  fuserc_plan* plan = nullptr;
  if (fuserc_bind(pkg, &n_rows, 1, &plan) != FUSERC_OK) return fail("binding");
  int64_t x_shape[2], bias_shape[1];
  fuserc_plan_input_shape(plan, 0, x_shape);
  fuserc_plan_input_shape(plan, 1, bias_shape);
  const size_t cols = static_cast<size_t>(bias_shape[0]);
  const size_t n = static_cast<size_t>(x_shape[0]) * cols;
  std::printf("N = %lld: %d kernel launches on %s\n", static_cast<long long>(n_rows),
              fuserc_plan_num_kernel_launches(plan),
              fuserc_package_is_emulated(pkg) ? "the CPU emulator" : "GPU 0");

  std::vector<uint16_t> x(n), bias(cols), y(n);
  for (size_t i = 0; i < n; ++i)
    x[i] = to_bf16(static_cast<float>(static_cast<int>((i * 2654435761u) % 2001) - 1000) / 250);
  for (size_t j = 0; j < cols; ++j) bias[j] = to_bf16(static_cast<float>(j % 17) / 16 - 0.5f);

  if (emulate) {  // host memory, a NULL stream; the call returns once the kernels have run
    const void* inputs[] = {x.data(), bias.data()};
    void* outputs[] = {y.data()};
    if (fuserc_launch(plan, nullptr, inputs, outputs, nullptr, 0) != FUSERC_OK)
      return fail("launching");
  } else {
    void *dx = nullptr, *dbias = nullptr, *dy = nullptr;
    if (fuserc_device_malloc(n * 2, &dx) != FUSERC_OK ||
        fuserc_device_malloc(cols * 2, &dbias) != FUSERC_OK ||
        fuserc_device_malloc(n * 2, &dy) != FUSERC_OK)
      return fail("allocating");
    if (fuserc_copy_to_device(dx, x.data(), n * 2) != FUSERC_OK ||
        fuserc_copy_to_device(dbias, bias.data(), cols * 2) != FUSERC_OK)
      return fail("copying");
    const void* inputs[] = {dx, dbias};
    void* outputs[] = {dy};
    if (fuserc_launch(plan, nullptr, inputs, outputs, nullptr, 0) != FUSERC_OK)
      return fail("launching");
    if (fuserc_stream_synchronize(nullptr) != FUSERC_OK) return fail("running");
    if (fuserc_copy_to_host(y.data(), dy, n * 2) != FUSERC_OK) return fail("copying back");
    fuserc_device_free(dx);
    fuserc_device_free(dbias);
    fuserc_device_free(dy);
  }

  // The kernel computes in f32 and rounds the result to bf16 (8 bits of mantissa); the sum
  // x + bias may also be rounded to bf16 first, as PyTorch does: allow two bf16 ulps.
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const float want = gelu_tanh(from_bf16(x[i]) + from_bf16(bias[i % cols]));
    const double err = std::fabs(from_bf16(y[i]) - want);
    worst = std::fmax(worst, err);
    if (err > std::fabs(want) * 0x1p-7 + 0x1p-9) ++bad;
  }
  std::printf("y = gelu(x + bias): %zu elements, max |error| %.3g against the host, %s\n", n, worst,
              bad ? "WRONG" : "ok");
  fuserc_plan_free(plan);
  fuserc_package_free(pkg);
  return bad ? 1 : 0;
}
