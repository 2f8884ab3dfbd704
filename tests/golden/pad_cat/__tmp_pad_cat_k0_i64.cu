// fuserc: graph 'pad_cat', kernel pad_cat_k0_i64 (pointwise)
// computes: ap = pad(a); eb = exp(b); y = cat(ap, eb, b)
// domain [N, 25], flat, vector 4, block 32, 64-bit indexing
extern "C" __global__ void __launch_bounds__(32) pad_cat_k0_i64(
    const float* __restrict__ a,
    const float* __restrict__ b,
    float* __restrict__ y,
    long long N) {
  const long long base = (long long)blockIdx.x * 128 + (long long)threadIdx.x * 4;
  if (N * 25 <= base) return;
  if ((base + 4 <= N * 25) && fz_is_aligned<16>(y, base)) {
    fz_vec<float, 4> y_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      float y_v;
      if ((base + lane) % 25 < 13) {
        float ap;
        if ((0 <= (base + lane) % 25 - 2) && ((base + lane) % 25 - 2 < 10)) {
          const float a_v = a[((base + lane) / 25) * 10 + (base + lane) % 25 - 2];
          ap = a_v;
        } else {
          ap = -1.0f;
        }
        y_v = ap;
      } else {
        float t;
        if ((base + lane) % 25 < 19) {
          const float b_v2 = b[((base + lane) / 25) * 6 + (base + lane) % 25 - 13];
          const float eb = expf(b_v2);
          t = eb;
        } else {
          const float b_v = b[((base + lane) / 25) * 6 + (base + lane) % 25 - 19];
          t = b_v;
        }
        y_v = t;
      }
      y_vec.v[lane] = y_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(y + base) = y_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const long long i = base + lane;
    if (i < N * 25) {
      float y_v;
      if (i % 25 < 13) {
        float ap;
        if ((0 <= i % 25 - 2) && (i % 25 - 2 < 10)) {
          const float a_v = a[(i / 25) * 10 + i % 25 - 2];
          ap = a_v;
        } else {
          ap = -1.0f;
        }
        y_v = ap;
      } else {
        float t;
        if (i % 25 < 19) {
          const float b_v2 = b[(i / 25) * 6 + i % 25 - 13];
          const float eb = expf(b_v2);
          t = eb;
        } else {
          const float b_v = b[(i / 25) * 6 + i % 25 - 19];
          t = b_v;
        }
        y_v = t;
      }
      y[i] = y_v;
    }
  }
}
