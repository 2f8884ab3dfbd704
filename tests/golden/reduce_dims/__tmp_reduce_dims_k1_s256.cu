// fuserc: graph 'reduce_dims', kernel reduce_dims_k1_s256 (reduction)
// computes: m_ends = amax(x)
// reduces [A, B, C] over rows of A * C (B rows), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_dims_k1_s256(
    const __half* __restrict__ x,
    __half* __restrict__ m_ends,
    float* partials_m_ends,
    unsigned int* counters,
    int A,
    int B,
    int C) {
  __shared__ float smem_m_ends[8];
  for (int row_base = (int)blockIdx.x; row_base < B; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    float acc_m_ends = (-__int_as_float(0x7f800000));
    if (active) {
      for (int k0 = (int)blockIdx.y * 256 + (int)threadIdx.x; k0 < A * C; k0 += (int)gridDim.y * 2048) {
        float held[8];
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int k = k0 + (int)gridDim.y * u * 256;
          if (k < A * C) {
            const float x_v = __half2float(x[k % C + C * row + B * C * (k / C)]);
            held[u] = x_v;
          }
        }
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int k = k0 + (int)gridDim.y * u * 256;
          if (k < A * C) {
            acc_m_ends = fz_maximum(acc_m_ends, held[u]);
          }
        }
      }
    }
    acc_m_ends = fz_row_reduce<256>(acc_m_ends, fz_max_op(), smem_m_ends);
    if (1 < (int)gridDim.y) {
      if (active && ((int)threadIdx.x == 0)) {
        partials_m_ends[(int)blockIdx.y + (int)gridDim.y * row] = acc_m_ends;
      }
      const bool last = fz_last_block(counters, row_base, (int)gridDim.y);
      if (!last) continue;
      acc_m_ends = (-__int_as_float(0x7f800000));
      if (active) {
        for (int g = (int)threadIdx.x; g < (int)gridDim.y; g += 256) {
          acc_m_ends = fz_maximum(acc_m_ends, fz_load_cg(partials_m_ends, g + (int)gridDim.y * row));
        }
      }
      acc_m_ends = fz_row_reduce<256>(acc_m_ends, fz_max_op(), smem_m_ends);
    }
    const float m_ends_v = acc_m_ends;
    if (active && ((int)threadIdx.x == 0)) {
      m_ends[row] = __float2half_rn(m_ends_v);
    }
  }
}
