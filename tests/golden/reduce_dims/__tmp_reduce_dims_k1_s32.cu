// fuserc: graph 'reduce_dims', kernel reduce_dims_k1_s32 (reduction)
// computes: m_ends = amax(x)
// reduces [A, B, C] over rows of A * C (B rows), contiguous rows, 32 threads per row, 8 rows per block, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_dims_k1_s32(
    const __half* __restrict__ x,
    __half* __restrict__ m_ends,
    int A,
    int B,
    int C) {
  for (int row_base = (int)blockIdx.x * 8; row_base < B; row_base += (int)gridDim.x * 8) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < B;
    float acc_m_ends = (-__int_as_float(0x7f800000));
    if (active) {
      for (int k0 = (int)threadIdx.x; k0 < A * C; k0 += 256) {
        float held[8];
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int k = k0 + u * 32;
          if (k < A * C) {
            const float x_v = __half2float(x[k % C + C * row + B * C * (k / C)]);
            held[u] = x_v;
          }
        }
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int k = k0 + u * 32;
          if (k < A * C) {
            acc_m_ends = fz_maximum(acc_m_ends, held[u]);
          }
        }
      }
    }
    acc_m_ends = fz_row_reduce<32>(acc_m_ends, fz_max_op(), 0);
    const float m_ends_v = acc_m_ends;
    if (active && ((int)threadIdx.x == 0)) {
      m_ends[row] = __float2half_rn(m_ends_v);
    }
  }
}
