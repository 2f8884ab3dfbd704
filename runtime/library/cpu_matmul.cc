#include "runtime/library/cpu_matmul.h"

#include <cmath>
#include <cstring>

#include "core/base/half.h"

namespace fuserc {
namespace {

template <class Acc>
Acc load(DType dtype, const void* base, int64_t offset) {
  const char* p = static_cast<const char*>(base);
  switch (dtype) {
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, p + offset * 2, 2);
      return static_cast<Acc>(f16_bits_to_float(h));
    }
    case DType::BF16: {
      uint16_t h;
      std::memcpy(&h, p + offset * 2, 2);
      return static_cast<Acc>(bf16_bits_to_float(h));
    }
    case DType::F32: {
      float f;
      std::memcpy(&f, p + offset * 4, 4);
      return static_cast<Acc>(f);
    }
    case DType::F64: {
      double d;
      std::memcpy(&d, p + offset * 8, 8);
      return static_cast<Acc>(d);
    }
    default: return 0;
  }
}

template <class Acc>
void store(DType dtype, void* base, int64_t offset, Acc v) {
  char* p = static_cast<char*>(base);
  switch (dtype) {
    case DType::F16: {
      uint16_t h = float_to_f16_bits(static_cast<float>(v));
      std::memcpy(p + offset * 2, &h, 2);
      break;
    }
    case DType::BF16: {
      uint16_t h = float_to_bf16_bits(static_cast<float>(v));
      std::memcpy(p + offset * 2, &h, 2);
      break;
    }
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(p + offset * 4, &f, 4);
      break;
    }
    case DType::F64: {
      double d = static_cast<double>(v);
      std::memcpy(p + offset * 8, &d, 8);
      break;
    }
    default: break;
  }
}

template <class Acc>
Acc epilogue(MatmulEpilogue e, Acc x) {
  switch (e) {
    case MatmulEpilogue::None: return x;
    case MatmulEpilogue::Relu: return x > 0 ? x : Acc(0);
    case MatmulEpilogue::Gelu: return Acc(0.5) * x * (Acc(1) + std::erf(x / std::sqrt(Acc(2))));
    case MatmulEpilogue::GeluTanh: {
      const Acc c = std::sqrt(Acc(2) / Acc(3.14159265358979323846));
      return Acc(0.5) * x * (Acc(1) + std::tanh(c * (x + Acc(0.044715) * x * x * x)));
    }
  }
  return x;
}

template <class Acc>
void run(const MatmulProblem& p, const void* a, const void* b, const void* bias, void* c) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t bt = 0; bt < p.batch; ++bt) {
      const int64_t ao = o * p.a.outer_stride + bt * p.a.batch_stride;
      const int64_t bo = o * p.b.outer_stride + bt * p.b.batch_stride;
      const int64_t co = o * p.c.outer_stride + bt * p.c.batch_stride;
      const int64_t vo = o * p.bias.outer_stride + bt * p.bias.batch_stride;
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          Acc acc = 0;
          for (int64_t l = 0; l < p.k; ++l)
            acc += load<Acc>(p.a.dtype, a, ao + i * p.a.row_stride + l * p.a.col_stride) *
                   load<Acc>(p.b.dtype, b, bo + l * p.b.row_stride + j * p.b.col_stride);
          if (p.has_bias) acc += load<Acc>(p.bias.dtype, bias, vo + j * p.bias.col_stride);
          store<Acc>(p.c.dtype, c, co + i * p.c.row_stride + j * p.c.col_stride,
                     epilogue(p.epilogue, acc));
        }
    }
}

}  // namespace

// The plain triple loop: correct, slow. (A blocked, multithreaded version replaces it.)
void cpu_matmul(const MatmulProblem& p, const void* a, const void* b, const void* bias, void* c,
                int threads) {
  (void)threads;
  if (p.a.dtype == DType::F64)
    run<double>(p, a, b, bias, c);
  else
    run<float>(p, a, b, bias, c);
}

}  // namespace fuserc
