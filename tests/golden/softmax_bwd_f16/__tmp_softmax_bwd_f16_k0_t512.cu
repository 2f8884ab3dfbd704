// fuserc: graph 'softmax_bwd_f16', kernel softmax_bwd_f16_k0_t512 (normalization)
// computes: ydy = mul(y, dy); s = sum(ydy); d = sub(dy, s); dxf = mul(y, d); dx = cast(dxf)
// reduces [N, C] over rows of C (N rows), contiguous rows, 512 threads per row, 1 row per block, row in registers (32 per thread), vectors of 8 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(512) softmax_bwd_f16_k0_t512(
    const __half* __restrict__ y,
    const __half* __restrict__ dy,
    __half* __restrict__ dx,
    int C,
    int N) {
  __shared__ float smem_s[16];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    const bool vec_ok = (C % 8 == 0) && fz_is_aligned<16>(y, C * row) && fz_is_aligned<16>(dy, C * row) && fz_is_aligned<16>(dx, C * row);
    float y_r[32];
    float dy_r[32];
    float acc_s = 0.0f;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
          [[maybe_unused]] const int g_v = j * 512 + (int)threadIdx.x;
          if (g_v * 8 < C) {
            const fz_vec<__half, 8> y_vec = *reinterpret_cast<const fz_vec<__half, 8>*>(y + (g_v * 8 + C * row));
            const fz_vec<__half, 8> dy_vec = *reinterpret_cast<const fz_vec<__half, 8>*>(dy + (g_v * 8 + C * row));
            #pragma unroll
            for (int lane = 0; lane < 8; ++lane) {
              const float y_v2 = __half2float(y_vec.v[lane]);
              const float dy_v2 = __half2float(dy_vec.v[lane]);
              const float ydy_v = (y_v2 * dy_v2);
              y_r[j * 8 + lane] = y_v2;
              dy_r[j * 8 + lane] = dy_v2;
              acc_s = (acc_s + ydy_v);
            }
          }
        }
      } else {
        #pragma unroll
        for (int j = 0; j < 32; ++j) {
          const int k = j * 512 + (int)threadIdx.x;
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
    }
    acc_s = fz_row_reduce<512>(acc_s, fz_sum_op(), smem_s);
    const float s = acc_s;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
          [[maybe_unused]] const int g_v = j * 512 + (int)threadIdx.x;
          if (g_v * 8 < C) {
            fz_vec<__half, 8> dx_vec;
            #pragma unroll
            for (int lane = 0; lane < 8; ++lane) {
              const float d_v = (dy_r[j * 8 + lane] - s);
              const float dxf_v = (y_r[j * 8 + lane] * d_v);
              const float dx_v2 = __half2float(__float2half_rn(dxf_v));
              dx_vec.v[lane] = __float2half_rn(dx_v2);
            }
            *reinterpret_cast<fz_vec<__half, 8>*>(dx + (g_v * 8 + C * row)) = dx_vec;
          }
        }
      } else {
        #pragma unroll
        for (int j = 0; j < 32; ++j) {
          const int k = j * 512 + (int)threadIdx.x;
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
}
