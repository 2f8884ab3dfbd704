// fuserc: graph 'rms_norm_fwd_bf16', kernel rms_norm_fwd_bf16_k0_t32 (normalization)
// computes: xf = cast(x); sq = mul(xf, xf); ms = mean(sq); mse = add(ms, 1e-06); r = rsqrt(mse); xn = mul(xf, r); xnb = cast(xn); y = mul(xnb, w)
// reduces [N, H] over rows of H (N rows), contiguous rows, 32 threads per row, 4 rows per block, row in registers (8 per thread), vectors of 8 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) rms_norm_fwd_bf16_k0_t32(
    const __nv_bfloat16* __restrict__ x,
    const __nv_bfloat16* __restrict__ w,
    __nv_bfloat16* __restrict__ y,
    int H,
    int N) {
  for (int row_base = (int)blockIdx.x * 4; row_base < N; row_base += (int)gridDim.x * 4) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < N;
    const bool vec_ok = (H % 8 == 0) && fz_is_aligned<16>(x, H * row) && fz_is_aligned<16>(w, 0) && fz_is_aligned<16>(y, H * row);
    float x_r[8];
    float w_r[8];
    float acc_ms = 0.0f;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          [[maybe_unused]] const int g_v = (int)threadIdx.x;
          if (g_v * 8 < H) {
            const fz_vec<__nv_bfloat16, 8> x_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(x + (g_v * 8 + H * row));
            const fz_vec<__nv_bfloat16, 8> w_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(w + g_v * 8);
            #pragma unroll
            for (int lane = 0; lane < 8; ++lane) {
              const float x_v2 = __bfloat162float(x_vec.v[lane]);
              const float xf_v = x_v2;
              const float sq_v = (xf_v * xf_v);
              const float w_v2 = __bfloat162float(w_vec.v[lane]);
              x_r[lane] = x_v2;
              w_r[lane] = w_v2;
              acc_ms = (acc_ms + sq_v);
            }
          }
        }
      } else {
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int k = j * 32 + (int)threadIdx.x;
          if (k < H) {
            const float x_v = __bfloat162float(x[k + H * row]);
            const float xf = x_v;
            const float sq = (xf * xf);
            const float w_v = __bfloat162float(w[k]);
            x_r[j] = x_v;
            w_r[j] = w_v;
            acc_ms = (acc_ms + sq);
          }
        }
      }
    }
    acc_ms = fz_row_reduce<32>(acc_ms, fz_sum_op(), 0);
    const float ms = (acc_ms / (float)H);
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          [[maybe_unused]] const int g_v = (int)threadIdx.x;
          if (g_v * 8 < H) {
            const float mse_v = (ms + 1e-06f);
            const float r_v = rsqrtf(mse_v);
            fz_vec<__nv_bfloat16, 8> y_vec;
            #pragma unroll
            for (int lane = 0; lane < 8; ++lane) {
              const float xf_v3 = x_r[lane];
              const float xn_v = (xf_v3 * r_v);
              const float xnb_v = __bfloat162float(__float2bfloat16_rn(xn_v));
              const float y_v2 = (xnb_v * w_r[lane]);
              y_vec.v[lane] = __float2bfloat16_rn(y_v2);
            }
            *reinterpret_cast<fz_vec<__nv_bfloat16, 8>*>(y + (g_v * 8 + H * row)) = y_vec;
          }
        }
      } else {
        const float mse = (ms + 1e-06f);
        const float r = rsqrtf(mse);
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int k = j * 32 + (int)threadIdx.x;
          if (k < H) {
            const float xf_v2 = x_r[j];
            const float xn = (xf_v2 * r);
            const float xnb = __bfloat162float(__float2bfloat16_rn(xn));
            const float y_v = (xnb * w_r[j]);
            y[k + H * row] = __float2bfloat16_rn(y_v);
          }
        }
      }
    }
  }
}
