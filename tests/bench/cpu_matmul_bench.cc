// The speed of the host matrix product (runtime/library/cpu_matmul.h): an M x K by K x N
// product (by default [4096, 1024] x [1024, 1024]), row-major, f32 and bf16 operands and
// result, with 1 and 2 threads and with every core; the best of 3 runs, in seconds and GFLOP/s.
//
//   cpu_matmul_bench [M N K]
// A benchmark: it prints figures and checks nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "core/base/half.h"
#include "runtime/library/cpu_matmul.h"

using namespace fuserc;

namespace {

// Row-major operands of `dtype` (f32 or bf16) holding values in [-1, 1].
std::vector<unsigned char> random_matrix(DType dtype, int64_t elements, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<unsigned char> bytes(elements * dtype_size(dtype));
  for (int64_t e = 0; e < elements; ++e) {
    const float v = u(rng);
    if (dtype == DType::BF16) {
      const uint16_t h = float_to_bf16_bits(v);
      std::copy_n(reinterpret_cast<const unsigned char*>(&h), 2, bytes.data() + e * 2);
    } else {
      std::copy_n(reinterpret_cast<const unsigned char*>(&v), 4, bytes.data() + e * 4);
    }
  }
  return bytes;
}

void bench(DType dtype, int64_t m, int64_t n, int64_t k, int threads) {
  std::mt19937 rng(1);
  MatmulProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a = {dtype, k, 1, 0, 0};
  p.b = {dtype, n, 1, 0, 0};
  p.c = {dtype, n, 1, 0, 0};
  auto a = random_matrix(dtype, m * k, rng), b = random_matrix(dtype, k * n, rng);
  std::vector<unsigned char> c(m * n * dtype_size(dtype));
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    auto start = std::chrono::steady_clock::now();
    cpu_matmul(p, a.data(), b.data(), nullptr, c.data(), threads);
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("%-4s [%lld,%lld]x[%lld,%lld]  threads %d  %8.3f s  %7.2f GFLOP/s\n",
              dtype_name(dtype), static_cast<long long>(m), static_cast<long long>(k),
              static_cast<long long>(k), static_cast<long long>(n), threads, best,
              2.0 * m * n * k / best * 1e-9);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t m = 4096, n = 1024, k = 1024;
  if (argc == 4) {
    m = std::atoll(argv[1]), n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: cpu_matmul_bench [M N K]\n");
    return 2;
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("%d cores\n", cores);
  std::vector<int> thread_counts = {1, 2};
  if (cores > 2) thread_counts.push_back(cores);
  for (DType dtype : {DType::F32, DType::BF16})
    for (int threads : thread_counts) bench(dtype, m, n, k, threads);
  return 0;
}
