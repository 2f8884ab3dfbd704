// fuserc: graph 'reduce_dims', kernel reduce_dims_k2_i64 (reduction)
// computes: v_last = var(x)
// reduces [A, B, C] over rows of C (A * B rows), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_dims_k2_i64(
    const __half* __restrict__ x,
    __half* __restrict__ v_last,
    fz_welford<float>* partials_v_last,
    unsigned int* counters,
    long long A,
    long long B,
    long long C) {
  __shared__ fz_welford<float> smem_v_last[8];
  for (long long row_base = (long long)blockIdx.x; row_base < A * B; row_base += (long long)gridDim.x) {
    const long long row = row_base;
    const bool active = true;
    fz_welford<float> acc_v_last = fz_welford_init<float>();
    if (active) {
      for (long long k0 = (long long)blockIdx.y * 256 + (long long)threadIdx.x; k0 < C; k0 += (long long)gridDim.y * 2048) {
        float held[8];
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < C) {
            const float x_v = __half2float(x[k + C * row]);
            held[u] = x_v;
          }
        }
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < C) {
            acc_v_last = fz_welford_push(acc_v_last, held[u]);
          }
        }
      }
    }
    acc_v_last = fz_row_reduce<256>(acc_v_last, fz_welford_op(), smem_v_last);
    if (1 < (long long)gridDim.y) {
      if (active && ((long long)threadIdx.x == 0)) {
        partials_v_last[(long long)blockIdx.y + (long long)gridDim.y * row] = acc_v_last;
      }
      const bool last = fz_last_block(counters, row_base, (long long)gridDim.y);
      if (!last) continue;
      acc_v_last = fz_welford_init<float>();
      if (active) {
        for (int g = (long long)threadIdx.x; g < (long long)gridDim.y; g += 256) {
          acc_v_last = fz_welford_combine(acc_v_last, fz_load_cg(partials_v_last, g + (long long)gridDim.y * row));
        }
      }
      acc_v_last = fz_row_reduce<256>(acc_v_last, fz_welford_op(), smem_v_last);
    }
    const float v_last_v = fz_welford_var(acc_v_last, 0.0f);
    if (active && ((long long)threadIdx.x == 0)) {
      v_last[row] = __float2half_rn(v_last_v);
    }
  }
}
