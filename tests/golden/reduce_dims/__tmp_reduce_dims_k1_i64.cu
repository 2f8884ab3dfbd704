// fuserc: graph 'reduce_dims', kernel reduce_dims_k1_i64 (reduction)
// computes: m_ends = amax(x)
// reduces [A, B, C] over rows of A * C (B rows), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_dims_k1_i64(
    const __half* __restrict__ x,
    __half* __restrict__ m_ends,
    float* partials_m_ends,
    unsigned int* counters,
    long long A,
    long long B,
    long long C) {
  __shared__ float smem_m_ends[8];
  for (long long row_base = (long long)blockIdx.x; row_base < B; row_base += (long long)gridDim.x) {
    const long long row = row_base;
    const bool active = true;
    float acc_m_ends = (-__int_as_float(0x7f800000));
    if (active) {
      for (long long k0 = (long long)blockIdx.y * 256 + (long long)threadIdx.x; k0 < A * C; k0 += (long long)gridDim.y * 2048) {
        float held[8];
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < A * C) {
            const float x_v = __half2float(x[k % C + C * row + B * C * (k / C)]);
            held[u] = x_v;
          }
        }
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < A * C) {
            acc_m_ends = fz_maximum(acc_m_ends, held[u]);
          }
        }
      }
    }
    acc_m_ends = fz_row_reduce<256>(acc_m_ends, fz_max_op(), smem_m_ends);
    if (1 < (long long)gridDim.y) {
      if (active && ((long long)threadIdx.x == 0)) {
        partials_m_ends[(long long)blockIdx.y + (long long)gridDim.y * row] = acc_m_ends;
      }
      const bool last = fz_last_block(counters, row_base, (long long)gridDim.y);
      if (!last) continue;
      acc_m_ends = (-__int_as_float(0x7f800000));
      if (active) {
        for (int g = (long long)threadIdx.x; g < (long long)gridDim.y; g += 256) {
          acc_m_ends = fz_maximum(acc_m_ends, fz_load_cg(partials_m_ends, g + (long long)gridDim.y * row));
        }
      }
      acc_m_ends = fz_row_reduce<256>(acc_m_ends, fz_max_op(), smem_m_ends);
    }
    const float m_ends_v = acc_m_ends;
    if (active && ((long long)threadIdx.x == 0)) {
      m_ends[row] = __float2half_rn(m_ends_v);
    }
  }
}
