// fuserc: graph 'int_ops', kernel int_ops_k0_i64 (reduction)
// computes: r = remainder(a, b); x = bitwise_xor(a, b); pos = gt(a, 0); w = where(pos, x, r); wf = cast(w); y = mul(wf, 0.5); sa = sum(a)
// reduces [N] over rows of N (1 row), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) int_ops_k0_i64(
    const int* __restrict__ a,
    const int* __restrict__ b,
    bool* __restrict__ pos,
    int* __restrict__ w,
    float* __restrict__ y,
    long long* __restrict__ sa,
    long long* partials_sa,
    unsigned int* counters,
    long long N) {
  __shared__ long long smem_sa[8];
  for (long long row_base = 0; row_base < 1; row_base += (long long)gridDim.x) {
    const long long row = 0;
    const bool active = true;
    long long acc_sa = 0LL;
    if (active) {
      for (long long k0 = (long long)blockIdx.y * 256 + (long long)threadIdx.x; k0 < N; k0 += (long long)gridDim.y * 1024) {
        int held[4];
        #pragma unroll
        for (int u = 0; u < 4; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < N) {
            const int a_v = a[k];
            const bool pos_v = (a_v > 0);
            const int b_v = b[k];
            const int x = fz_bitwise_xor(a_v, b_v);
            const int r = fz_remainder(a_v, b_v);
            const int w_v = (pos_v ? x : r);
            const float wf = (float)w_v;
            const float y_v = (wf * 0.5f);
            held[u] = a_v;
            pos[k] = pos_v;
            w[k] = w_v;
            y[k] = y_v;
          }
        }
        #pragma unroll
        for (int u = 0; u < 4; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < N) {
            acc_sa = (acc_sa + (long long)held[u]);
          }
        }
      }
    }
    acc_sa = fz_row_reduce<256>(acc_sa, fz_sum_op(), smem_sa);
    if (1 < (long long)gridDim.y) {
      if (active && ((long long)threadIdx.x == 0)) {
        partials_sa[(long long)blockIdx.y] = acc_sa;
      }
      const bool last = fz_last_block(counters, row_base, (long long)gridDim.y);
      if (!last) continue;
      acc_sa = 0LL;
      if (active) {
        for (int g = (long long)threadIdx.x; g < (long long)gridDim.y; g += 256) {
          acc_sa = (acc_sa + fz_load_cg(partials_sa, g));
        }
      }
      acc_sa = fz_row_reduce<256>(acc_sa, fz_sum_op(), smem_sa);
    }
    const long long sa_v = acc_sa;
    if (active && ((long long)threadIdx.x == 0)) {
      sa[row] = sa_v;
    }
  }
}
