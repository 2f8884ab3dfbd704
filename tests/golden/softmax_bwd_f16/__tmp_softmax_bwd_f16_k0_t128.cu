// fuserc: graph 'softmax_bwd_f16', kernel softmax_bwd_f16_k0_t128 (normalization)
// computes: ydy = mul(y, dy); s = sum(ydy); d = sub(dy, s); dxf = mul(y, d); dx = cast(dxf)
// reduces [N, C] over rows of C (N rows), contiguous rows, 128 threads per row, 1 row per block, row in registers (8 per thread), 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) softmax_bwd_f16_k0_t128(
    const __half* __restrict__ y,
    const __half* __restrict__ dy,
    __half* __restrict__ dx,
    int C,
    int N) {
  __shared__ float smem_s[4];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    float y_r[8];
    float dy_r[8];
    float acc_s = 0.0f;
    if (active) {
      #pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int k = j * 128 + (int)threadIdx.x;
        if (k < C) {
          const float y_v = __half2float(y[k + C * row]);
          const float dy_v = __half2float(dy[k + C * row]);
          const float ydy = (y_v * dy_v);
          y_r[j] = y_v;
          dy_r[j] = dy_v;
          acc_s = (acc_s + ydy);
        }
      }
    }
    acc_s = fz_row_reduce<128>(acc_s, fz_sum_op(), smem_s);
    const float s = acc_s;
    if (active) {
      #pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int k = j * 128 + (int)threadIdx.x;
        if (k < C) {
          const float d = (dy_r[j] - s);
          const float dxf = (y_r[j] * d);
          const float dx_v = __half2float(__float2half_rn(dxf));
          dx[k + C * row] = __float2half_rn(dx_v);
        }
      }
    }
  }
}
