// Owns the timing helpers the `fuserc bench` modes share: the median of repeated runs, and
// binding a new shape each time (a cache miss) walked through the symbols' ranges.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "runtime/executable.h"

namespace fuserc::cmd {

inline double median_us(int runs, const std::function<void()>& f) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The median time of binding `exe` to a shape it has not seen (each run moves every symbol by
// one from its hint, wrapping within its range).
inline double bind_new_shape_us(Executable& exe, int runs) {
  const auto& m = exe.metadata();
  std::vector<int64_t> base;
  for (const auto* s : *m.symbols())
    base.push_back(std::clamp<int64_t>(s->hint(), s->min(), s->max()));
  int64_t step = 0;
  return median_us(runs, [&] {
    std::vector<int64_t> v = base;
    ++step;
    for (size_t i = 0; i < v.size(); ++i) {
      const auto* s = m.symbols()->Get(static_cast<uint32_t>(i));
      int64_t span = std::max<int64_t>(1, std::min<int64_t>(s->max() - s->min() + 1, 1 << 20));
      v[i] = s->min() + (base[i] - s->min() + step) % span;
    }
    exe.bind(v);
  });
}

}  // namespace fuserc::cmd
