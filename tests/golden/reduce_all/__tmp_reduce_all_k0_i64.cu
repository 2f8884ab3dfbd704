// fuserc: graph 'reduce_all', kernel reduce_all_k0_i64 (reduction)
// computes: s = sum(x); m = amax(x); ax = abs(x); l1 = mean(ax)
// reduces [N, M] over rows of M * N (1 row), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_all_k0_i64(
    const float* __restrict__ x,
    float* __restrict__ s,
    float* __restrict__ m,
    float* __restrict__ l1,
    float* partials_s,
    float* partials_m,
    float* partials_l1,
    unsigned int* counters,
    long long M,
    long long N) {
  __shared__ float smem_s[8];
  __shared__ float smem_m[8];
  __shared__ float smem_l1[8];
  for (long long row_base = 0; row_base < 1; row_base += (long long)gridDim.x) {
    const long long row = 0;
    const bool active = true;
    float acc_s = 0.0f;
    float acc_m = (-__int_as_float(0x7f800000));
    float acc_l1 = 0.0f;
    if (active) {
      for (long long k0 = (long long)blockIdx.y * 256 + (long long)threadIdx.x; k0 < M * N; k0 += (long long)gridDim.y * 1024) {
        float held[4];
        float held_v[4];
        float held_v2[4];
        #pragma unroll
        for (int u = 0; u < 4; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < M * N) {
            const float x_v = x[k];
            const float ax = fz_abs(x_v);
            held[u] = x_v;
            held_v[u] = x_v;
            held_v2[u] = ax;
          }
        }
        #pragma unroll
        for (int u = 0; u < 4; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < M * N) {
            acc_s = (acc_s + held[u]);
            acc_m = fz_maximum(acc_m, held_v[u]);
            acc_l1 = (acc_l1 + held_v2[u]);
          }
        }
      }
    }
    acc_s = fz_row_reduce<256>(acc_s, fz_sum_op(), smem_s);
    acc_m = fz_row_reduce<256>(acc_m, fz_max_op(), smem_m);
    acc_l1 = fz_row_reduce<256>(acc_l1, fz_sum_op(), smem_l1);
    if (1 < (long long)gridDim.y) {
      if (active && ((long long)threadIdx.x == 0)) {
        partials_s[(long long)blockIdx.y] = acc_s;
        partials_m[(long long)blockIdx.y] = acc_m;
        partials_l1[(long long)blockIdx.y] = acc_l1;
      }
      const bool last = fz_last_block(counters, row_base, (long long)gridDim.y);
      if (!last) continue;
      acc_s = 0.0f;
      acc_m = (-__int_as_float(0x7f800000));
      acc_l1 = 0.0f;
      if (active) {
        for (int g = (long long)threadIdx.x; g < (long long)gridDim.y; g += 256) {
          acc_s = (acc_s + fz_load_cg(partials_s, g));
          acc_m = fz_maximum(acc_m, fz_load_cg(partials_m, g));
          acc_l1 = (acc_l1 + fz_load_cg(partials_l1, g));
        }
      }
      acc_s = fz_row_reduce<256>(acc_s, fz_sum_op(), smem_s);
      acc_m = fz_row_reduce<256>(acc_m, fz_max_op(), smem_m);
      acc_l1 = fz_row_reduce<256>(acc_l1, fz_sum_op(), smem_l1);
    }
    const float s_v = acc_s;
    const float m_v = acc_m;
    const float l1_v = (acc_l1 / (float)(M * N));
    if (active && ((long long)threadIdx.x == 0)) {
      s[row] = s_v;
      m[row] = m_v;
      l1[row] = l1_v;
    }
  }
}
