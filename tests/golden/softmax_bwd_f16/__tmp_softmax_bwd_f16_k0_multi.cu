// fuserc: graph 'softmax_bwd_f16', kernel softmax_bwd_f16_k0_multi (normalization)
// computes: ydy = mul(y, dy); s = sum(ydy); d = sub(dy, s); dxf = mul(y, d); dx = cast(dxf)
// reduces [N, C] over rows of C (N rows), contiguous rows, 1024 threads per row, 1 row per block, 32-bit indexing
extern "C" __global__ void __launch_bounds__(1024) softmax_bwd_f16_k0_multi(
    const __half* __restrict__ y,
    const __half* __restrict__ dy,
    __half* __restrict__ dx,
    int C,
    int N) {
  __shared__ float smem_s[32];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    float acc_s = 0.0f;
    if (active) {
      for (int k = (int)threadIdx.x; k < C; k += 1024) {
        const float y_v = __half2float(y[k + C * row]);
        const float dy_v = __half2float(dy[k + C * row]);
        const float ydy = (y_v * dy_v);
        acc_s = (acc_s + ydy);
      }
    }
    acc_s = fz_row_reduce<1024>(acc_s, fz_sum_op(), smem_s);
    const float s = acc_s;
    if (active) {
      for (int k = (int)threadIdx.x; k < C; k += 1024) {
        const float y_v2 = __half2float(y[k + C * row]);
        const float dy_v2 = __half2float(dy[k + C * row]);
        const float d = (dy_v2 - s);
        const float dxf = (y_v2 * d);
        const float dx_v = __half2float(__float2half_rn(dxf));
        dx[k + C * row] = __float2half_rn(dx_v);
      }
    }
  }
}
