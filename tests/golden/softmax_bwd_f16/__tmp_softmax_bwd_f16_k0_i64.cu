// fuserc: graph 'softmax_bwd_f16', kernel softmax_bwd_f16_k0_i64 (normalization)
// computes: ydy = mul(y, dy); s = sum(ydy); d = sub(dy, s); dxf = mul(y, d); dx = cast(dxf)
// reduces [N, C] over rows of C (N rows), contiguous rows, 1024 threads per row, 1 row per block, 64-bit indexing
extern "C" __global__ void __launch_bounds__(1024) softmax_bwd_f16_k0_i64(
    const __half* __restrict__ y,
    const __half* __restrict__ dy,
    __half* __restrict__ dx,
    long long C,
    long long N) {
  __shared__ float smem_s[32];
  for (long long row_base = (long long)blockIdx.x; row_base < N; row_base += (long long)gridDim.x) {
    const long long row = row_base;
    const bool active = true;
    float acc_s = 0.0f;
    if (active) {
      for (long long k0 = (long long)threadIdx.x; k0 < C; k0 += 8192) {
        float held[8];
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const long long k = k0 + u * 1024;
          if (k < C) {
            const float y_v = __half2float(y[k + C * row]);
            const float dy_v = __half2float(dy[k + C * row]);
            const float ydy = (y_v * dy_v);
            held[u] = ydy;
          }
        }
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const long long k = k0 + u * 1024;
          if (k < C) {
            acc_s = (acc_s + held[u]);
          }
        }
      }
    }
    acc_s = fz_row_reduce<1024>(acc_s, fz_sum_op(), smem_s);
    const float s = acc_s;
    if (active) {
      for (long long k0_v = (long long)threadIdx.x; k0_v < C; k0_v += 8192) {
        #pragma unroll
        for (int u_v = 0; u_v < 8; ++u_v) {
          const long long k = k0_v + u_v * 1024;
          if (k < C) {
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
  }
}
