#include "cmd/bench_library.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "cmd/bench_timing.h"
#include "core/base/diagnostics.h"
#include "core/base/half.h"
#include "runtime/launch_plan.h"
#include "runtime/library/cpu_matmul.h"

namespace fuserc::cmd {
namespace {

// The elements an operand spans: its last element's offset plus one (strides are >= 0).
int64_t span(const MatmulOperand& o, int64_t rows, int64_t cols, int64_t batch, int64_t outer) {
  return (outer - 1) * o.outer_stride + (batch - 1) * o.batch_stride + (rows - 1) * o.row_stride +
         (cols - 1) * o.col_stride + 1;
}

// A host buffer of `elements` of `dtype`, filled with small values of that dtype (the bits of
// multiples of 1/8 in [-0.375, 0.375], exact in every float dtype).
std::vector<uint8_t> filled(DType dtype, int64_t elements) {
  std::vector<uint8_t> v(static_cast<size_t>(elements) * dtype_size(dtype));
  for (int64_t i = 0; i < elements; ++i) {
    const double x = 0.125 * static_cast<double>(i % 7) - 0.375;
    uint8_t* p = v.data() + static_cast<size_t>(i) * dtype_size(dtype);
    switch (dtype) {
      case DType::F64: std::memcpy(p, &x, 8); break;
      case DType::F32: {
        const float f = static_cast<float>(x);
        std::memcpy(p, &f, 4);
        break;
      }
      default: {
        const float f = static_cast<float>(x);
        const uint16_t h = dtype == DType::BF16 ? float_to_bf16_bits(f) : float_to_f16_bits(f);
        std::memcpy(p, &h, 2);
      }
    }
  }
  return v;
}

}  // namespace

std::vector<int64_t> symbols_or_hints(const Executable& exe,
                                      const std::map<std::string, int64_t>& given) {
  const auto& ranges = exe.symbol_ranges();
  for (const auto& [name, value] : given) {
    bool known = false;
    for (const auto& r : ranges) known = known || r.name == name;
    if (!known) throw UsageError("--bind: the graph has no symbol " + quote(name));
  }
  std::vector<int64_t> v;
  for (size_t i = 0; i < ranges.size(); ++i) {
    auto it = given.find(ranges[i].name);
    const auto* s = exe.metadata().symbols()->Get(static_cast<uint32_t>(i));
    v.push_back(it != given.end() ? it->second
                                  : std::clamp<int64_t>(s->hint(), ranges[i].min, ranges[i].max));
  }
  return v;
}

nlohmann::json bench_library_steps(Executable& exe, const std::vector<int64_t>& symbols,
                                   int runs) {
  nlohmann::json steps = nlohmann::json::array();
  auto binding = exe.bind(symbols);
  LaunchPlan plan(exe, *binding);
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const PlannedMatmul& mm : plan.matmuls()) {
    const MatmulProblem& p = mm.problem;
    std::vector<uint8_t> a = filled(p.a.dtype, span(p.a, p.m, p.k, p.batch, p.outer));
    std::vector<uint8_t> b = filled(p.b.dtype, span(p.b, p.k, p.n, p.batch, p.outer));
    std::vector<uint8_t> bias =
        p.has_bias ? filled(p.bias.dtype, span(p.bias, 1, p.n, p.batch, p.outer))
                   : std::vector<uint8_t>();
    std::vector<uint8_t> c(static_cast<size_t>(span(p.c, p.m, p.n, p.batch, p.outer)) *
                           dtype_size(p.c.dtype));
    const double us = median_us(runs, [&] {
      cpu_matmul(p, a.data(), b.data(), p.has_bias ? bias.data() : nullptr, c.data());
    });
    const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) *
                         static_cast<double>(p.k) * static_cast<double>(p.batch) *
                         static_cast<double>(p.outer);
    steps.push_back({{"name", mm.name},
                     {"m", p.m},
                     {"n", p.n},
                     {"k", p.k},
                     {"batch", p.batch},
                     {"outer", p.outer},
                     {"dtype", dtype_name(p.a.dtype)},
                     {"us", us},
                     {"gflops", us > 0 ? flops / us / 1e3 : 0.0},
                     {"threads", threads}});
  }
  return steps;
}

}  // namespace fuserc::cmd
