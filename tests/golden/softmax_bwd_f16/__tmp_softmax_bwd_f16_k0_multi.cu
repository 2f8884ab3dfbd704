// fuserc: graph 'softmax_bwd_f16', kernel softmax_bwd_f16_k0_multi (normalization)
// computes: ydy = mul(y, dy); s = sum(ydy); d = sub(dy, s); dxf = mul(y, d); dx = cast(dxf)
// reduces [N, C] over rows of C (N rows), contiguous rows, 1024 threads per row, 1 row per block, vectors of 8 when the row allows, 32-bit indexing
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
    const bool vec_ok = (C % 8 == 0) && fz_is_aligned<16>(y, C * row) && fz_is_aligned<16>(dy, C * row) && fz_is_aligned<16>(dx, C * row);
    float acc_s = 0.0f;
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < C / 8; g_v += 1024) {
          const fz_vec<__half, 8> y_vec = *reinterpret_cast<const fz_vec<__half, 8>*>(y + (g_v * 8 + C * row));
          const fz_vec<__half, 8> dy_vec = *reinterpret_cast<const fz_vec<__half, 8>*>(dy + (g_v * 8 + C * row));
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float y_v2 = __half2float(y_vec.v[lane]);
            const float dy_v2 = __half2float(dy_vec.v[lane]);
            const float ydy_v = (y_v2 * dy_v2);
            acc_s = (acc_s + ydy_v);
          }
        }
      } else {
        for (int k0 = (int)threadIdx.x; k0 < C; k0 += 8192) {
          float held[8];
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + u * 1024;
            if (k < C) {
              const float y_v = __half2float(y[k + C * row]);
              const float dy_v = __half2float(dy[k + C * row]);
              const float ydy = (y_v * dy_v);
              held[u] = ydy;
            }
          }
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + u * 1024;
            if (k < C) {
              acc_s = (acc_s + held[u]);
            }
          }
        }
      }
    }
    acc_s = fz_row_reduce<1024>(acc_s, fz_sum_op(), smem_s);
    const float s = acc_s;
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < C / 8; g_v += 1024) {
          const fz_vec<__half, 8> y_vec_v = *reinterpret_cast<const fz_vec<__half, 8>*>(y + (g_v * 8 + C * row));
          const fz_vec<__half, 8> dy_vec_v = *reinterpret_cast<const fz_vec<__half, 8>*>(dy + (g_v * 8 + C * row));
          fz_vec<__half, 8> dx_vec;
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float y_v4 = __half2float(y_vec_v.v[lane]);
            const float dy_v4 = __half2float(dy_vec_v.v[lane]);
            const float d_v = (dy_v4 - s);
            const float dxf_v = (y_v4 * d_v);
            const float dx_v2 = __half2float(__float2half_rn(dxf_v));
            dx_vec.v[lane] = __float2half_rn(dx_v2);
          }
          *reinterpret_cast<fz_vec<__half, 8>*>(dx + (g_v * 8 + C * row)) = dx_vec;
        }
      } else {
        for (int k0_v = (int)threadIdx.x; k0_v < C; k0_v += 8192) {
          #pragma unroll
          for (int u_v = 0; u_v < 8; ++u_v) {
            const int k = k0_v + u_v * 1024;
            if (k < C) {
              const float y_v3 = __half2float(y[k + C * row]);
              const float dy_v3 = __half2float(dy[k + C * row]);
              const float d = (dy_v3 - s);
              const float dxf = (y_v3 * d);
              const float dx_v = __half2float(__float2half_rn(dxf));
              dx[k + C * row] = __float2half_rn(dx_v);
            }
          }
        }
      }
    }
  }
}
