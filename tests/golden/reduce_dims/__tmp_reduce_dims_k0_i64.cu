// fuserc: graph 'reduce_dims', kernel reduce_dims_k0_i64 (reduction)
// computes: s_mid = sum(x)
// reduces [A, B, C] over rows of B (A * C rows), strided rows, 8 threads across rows, 32 columns per block, rows split across blocks, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_dims_k0_i64(
    const __half* __restrict__ x,
    __half* __restrict__ s_mid,
    float* partials_s_mid,
    unsigned int* counters,
    long long A,
    long long B,
    long long C) {
  __shared__ float smem_s_mid[256];
  const long long row = (long long)blockIdx.x * 32 + (long long)threadIdx.x;
  const bool active = (long long)blockIdx.x * 32 + (long long)threadIdx.x < A * C;
  float acc_s_mid = 0.0f;
  if (active) {
    for (long long k0 = (long long)blockIdx.y * 8 + (long long)threadIdx.y; k0 < B; k0 += (long long)gridDim.y * 64) {
      float held[8];
      #pragma unroll
      for (int u = 0; u < 8; ++u) {
        const long long k = k0 + (long long)gridDim.y * u * 8;
        if (k < B) {
          const float x_v = __half2float(x[row % C + C * k + B * C * (row / C)]);
          held[u] = x_v;
        }
      }
      #pragma unroll
      for (int u = 0; u < 8; ++u) {
        const long long k = k0 + (long long)gridDim.y * u * 8;
        if (k < B) {
          acc_s_mid = (acc_s_mid + held[u]);
        }
      }
    }
  }
  acc_s_mid = fz_column_reduce<32, 8>(acc_s_mid, fz_sum_op(), smem_s_mid);
  if (1 < (long long)gridDim.y) {
    if (active && ((long long)threadIdx.y == 0)) {
      partials_s_mid[(long long)blockIdx.y + (long long)gridDim.y * row] = acc_s_mid;
    }
    const bool last = fz_last_block(counters, (long long)blockIdx.x, (long long)gridDim.y);
    if (!last) return;
    acc_s_mid = 0.0f;
    if (active) {
      for (int g = (long long)threadIdx.y; g < (long long)gridDim.y; g += 8) {
        acc_s_mid = (acc_s_mid + fz_load_cg(partials_s_mid, g + (long long)gridDim.y * row));
      }
    }
    acc_s_mid = fz_column_reduce<32, 8>(acc_s_mid, fz_sum_op(), smem_s_mid);
  }
  const float s_mid_v = acc_s_mid;
  if (active && ((long long)threadIdx.y == 0)) {
    s_mid[row] = __float2half_rn(s_mid_v);
  }
}
