// fuserc: graph 'softmax_f32', kernel softmax_f32_k0_i64 (normalization)
// computes: m = amax(x); xs = sub(x, m); e = exp(xs); s = sum(e); y = div(e, s)
// reduces [N, C] over rows of C (N rows), contiguous rows, 1024 threads per row, 1 row per block, 64-bit indexing
extern "C" __global__ void __launch_bounds__(1024) softmax_f32_k0_i64(
    const float* __restrict__ x,
    float* __restrict__ y,
    long long C,
    long long N) {
  __shared__ fz_lse<float> smem_m[32];
  for (long long row_base = (long long)blockIdx.x; row_base < N; row_base += (long long)gridDim.x) {
    const long long row = row_base;
    const bool active = true;
    fz_lse<float> acc_m = fz_lse_init<float>();
    if (active) {
      for (long long k0 = (long long)threadIdx.x; k0 < C; k0 += 4096) {
        float held[4];
        #pragma unroll
        for (int u = 0; u < 4; ++u) {
          const long long k = k0 + u * 1024;
          if (k < C) {
            const float x_v = x[k + C * row];
            held[u] = x_v;
          }
        }
        #pragma unroll
        for (int u = 0; u < 4; ++u) {
          const long long k = k0 + u * 1024;
          if (k < C) {
            acc_m = fz_lse_push(acc_m, held[u]);
          }
        }
      }
    }
    acc_m = fz_row_reduce<1024>(acc_m, fz_lse_op(), smem_m);
    const float m = fz_lse_max(acc_m);
    const float s = fz_lse_sum(acc_m);
    const float s_inv = (1.0f / s);
    if (active) {
      for (long long k0_v = (long long)threadIdx.x; k0_v < C; k0_v += 4096) {
        #pragma unroll
        for (int u_v = 0; u_v < 4; ++u_v) {
          const long long k = k0_v + u_v * 1024;
          if (k < C) {
            const float x_v2 = x[k + C * row];
            const float xs = (x_v2 - m);
            const float e = expf(xs);
            const float y_v = (e * s_inv);
            y[k + C * row] = y_v;
          }
        }
      }
    }
  }
}
