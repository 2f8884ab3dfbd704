// fuserc: graph 'rms_norm_fwd_bf16', kernel rms_norm_fwd_bf16_k0_multi (normalization)
// computes: xf = cast(x); sq = mul(xf, xf); ms = mean(sq); mse = add(ms, 1e-06); r = rsqrt(mse); xn = mul(xf, r); xnb = cast(xn); y = mul(xnb, w)
// reduces [N, H] over rows of H (N rows), contiguous rows, 1024 threads per row, 1 row per block, vectors of 8 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(1024) rms_norm_fwd_bf16_k0_multi(
    const __nv_bfloat16* __restrict__ x,
    const __nv_bfloat16* __restrict__ w,
    __nv_bfloat16* __restrict__ y,
    int H,
    int N) {
  __shared__ float smem_ms[32];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    const bool vec_ok = (H % 8 == 0) && fz_is_aligned<16>(x, H * row) && fz_is_aligned<16>(w, 0) && fz_is_aligned<16>(y, H * row);
    float acc_ms = 0.0f;
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < H / 8; g_v += 1024) {
          const fz_vec<__nv_bfloat16, 8> x_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(x + (g_v * 8 + H * row));
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float x_v2 = __bfloat162float(x_vec.v[lane]);
            const float xf_v = x_v2;
            const float sq_v = (xf_v * xf_v);
            acc_ms = (acc_ms + sq_v);
          }
        }
      } else {
        for (int k0 = (int)threadIdx.x; k0 < H; k0 += 8192) {
          float held[8];
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + u * 1024;
            if (k < H) {
              const float x_v = __bfloat162float(x[k + H * row]);
              const float xf = x_v;
              const float sq = (xf * xf);
              held[u] = sq;
            }
          }
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + u * 1024;
            if (k < H) {
              acc_ms = (acc_ms + held[u]);
            }
          }
        }
      }
    }
    acc_ms = fz_row_reduce<1024>(acc_ms, fz_sum_op(), smem_ms);
    const float ms = (acc_ms / (float)H);
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < H / 8; g_v += 1024) {
          const fz_vec<__nv_bfloat16, 8> x_vec_v = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(x + (g_v * 8 + H * row));
          const fz_vec<__nv_bfloat16, 8> w_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(w + g_v * 8);
          const float mse_v = (ms + 1e-06f);
          const float r_v = rsqrtf(mse_v);
          fz_vec<__nv_bfloat16, 8> y_vec;
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float x_v4 = __bfloat162float(x_vec_v.v[lane]);
            const float xf_v3 = x_v4;
            const float xn_v = (xf_v3 * r_v);
            const float xnb_v = __bfloat162float(__float2bfloat16_rn(xn_v));
            const float w_v2 = __bfloat162float(w_vec.v[lane]);
            const float y_v2 = (xnb_v * w_v2);
            y_vec.v[lane] = __float2bfloat16_rn(y_v2);
          }
          *reinterpret_cast<fz_vec<__nv_bfloat16, 8>*>(y + (g_v * 8 + H * row)) = y_vec;
        }
      } else {
        const float mse = (ms + 1e-06f);
        const float r = rsqrtf(mse);
        for (int k0_v = (int)threadIdx.x; k0_v < H; k0_v += 8192) {
          #pragma unroll
          for (int u_v = 0; u_v < 8; ++u_v) {
            const int k = k0_v + u_v * 1024;
            if (k < H) {
              const float x_v3 = __bfloat162float(x[k + H * row]);
              const float xf_v2 = x_v3;
              const float xn = (xf_v2 * r);
              const float xnb = __bfloat162float(__float2bfloat16_rn(xn));
              const float w_v = __bfloat162float(w[k]);
              const float y_v = (xnb * w_v);
              y[k + H * row] = __float2bfloat16_rn(y_v);
            }
          }
        }
      }
    }
  }
}
