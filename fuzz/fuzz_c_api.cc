// Fuzz target: the C API's load and bind path (fuserc_runtime.h), in the CPU emulator (no
// driver, nothing launched): fuserc_package_load_bytes, the queries, fuserc_bind and
// fuserc_bind_shapes with shapes from the end of the input. Every failure must be a status
// with a message; FUSERC_ERROR_INTERNAL, a crash or a sanitizer report is a finding.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "fuzz/package_fixup.h"
#include "runtime/api/fuserc_runtime.h"

namespace {

void check(fuserc_status status) {
  if (status == FUSERC_ERROR_INTERNAL) fuserc_fuzz::fail(fuserc_last_error());
  if (status != FUSERC_OK && fuserc_last_error()[0] == '\0') fuserc_fuzz::fail("no message");
}

}  // namespace

int fuserc_fuzz::fuzz_c_api(const uint8_t* data, size_t size) {
  size_t tail = size > 256 ? 64 : 0;
  fuserc_fuzz::ByteTail bytes(data + size - tail, tail);
  fuserc_load_options options{FUSERC_DEVICE_EMULATOR, nullptr};
  fuserc_package* pkg = nullptr;
  std::string package(reinterpret_cast<const char*>(data), size - tail);
  if (size % 4 != 0) fuserc_fuzz::fix_head_hash(package);  // see package_fixup.h
  fuserc_status status =
      fuserc_package_load_bytes(package.data(), package.size(), 1, &options, &pkg);
  check(status);
  if (status != FUSERC_OK) return 0;

  (void)fuserc_package_name(pkg);
  const int32_t n_symbols = fuserc_package_num_symbols(pkg);
  const int32_t n_inputs = fuserc_package_num_inputs(pkg);
  const int32_t n_outputs = fuserc_package_num_outputs(pkg);
  std::vector<int64_t> symbols;
  for (int32_t i = 0; i < n_symbols; ++i) {
    fuserc_symbol_info info;
    check(fuserc_package_symbol(pkg, i, &info));
    uint64_t span = static_cast<uint64_t>(info.max) - static_cast<uint64_t>(info.min) + 1;
    uint64_t pick = bytes.take(4);
    symbols.push_back((pick & 1) == 0 && info.max >= info.min
                          ? static_cast<int64_t>(static_cast<uint64_t>(info.min) +
                                                 (span ? (pick >> 1) % span : pick >> 1))
                          : bytes.size_value());
  }
  std::vector<std::vector<int64_t>> shapes;
  for (int32_t i = 0; i < n_inputs; ++i) {
    fuserc_tensor_info info;
    check(fuserc_package_input(pkg, i, &info));
    std::vector<int64_t> shape;
    for (int32_t d = 0; d < info.rank; ++d) shape.push_back(bytes.size_value());
    shapes.push_back(shape);
  }
  for (int32_t i = 0; i < n_outputs; ++i) {
    fuserc_tensor_info info;
    check(fuserc_package_output(pkg, i, &info));
  }
  std::vector<char> json(4096);
  size_t length = 0;
  check(fuserc_package_inspect_json(pkg, nullptr, 0, json.data(), json.size(), &length));

  auto use_plan = [&](fuserc_plan* plan) {
    (void)fuserc_plan_workspace_bytes(plan);
    (void)fuserc_plan_num_kernel_launches(plan);
    std::vector<int64_t> values(n_symbols > 0 ? n_symbols : 1), dims(64);
    check(fuserc_plan_symbol_values(plan, values.data()));
    for (int32_t i = 0; i < n_inputs; ++i) {
      fuserc_tensor_info info;
      check(fuserc_package_input(pkg, i, &info));
      if (info.rank > 64) continue;
      check(fuserc_plan_input_shape(plan, i, dims.data()));
      check(fuserc_plan_input_strides(plan, i, dims.data()));
    }
    for (int32_t i = 0; i < n_outputs; ++i) {
      fuserc_tensor_info info;
      check(fuserc_package_output(pkg, i, &info));
      if (info.rank > 64) continue;
      check(fuserc_plan_output_shape(plan, i, dims.data()));
    }
    fuserc_plan_free(plan);
  };
  fuserc_plan* plan = nullptr;
  status = fuserc_bind(pkg, symbols.data(), static_cast<int32_t>(symbols.size()), &plan);
  check(status);
  if (status == FUSERC_OK) use_plan(plan);

  std::vector<const int64_t*> shape_ptrs;
  std::vector<int32_t> ranks;
  for (const auto& s : shapes) {
    shape_ptrs.push_back(s.data());
    ranks.push_back(static_cast<int32_t>(s.size()));
  }
  plan = nullptr;
  status = fuserc_bind_shapes(pkg, shape_ptrs.data(), ranks.data(),
                              static_cast<int32_t>(shapes.size()), &plan);
  check(status);
  if (status == FUSERC_OK) use_plan(plan);
  fuserc_package_free(pkg);
  return 0;
}

#ifndef FUSERC_FUZZ_REPLAY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuserc_fuzz::fuzz_c_api(data, size);
}
#endif
