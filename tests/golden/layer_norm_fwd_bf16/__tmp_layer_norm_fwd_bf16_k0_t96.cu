// fuserc: graph 'layer_norm_fwd_bf16', kernel layer_norm_fwd_bf16_k0_t96 (normalization)
// computes: xf = cast(x); var, mean = var_mean(xf); ve = add(var, eps); rstd = rsqrt(ve); xc = sub(xf, mean); xn = mul(xc, rstd); xw = mul(xn, w); yf = add(xw, b); y = cast(yf)
// reduces [N, 768] over rows of 768 (N rows), contiguous rows, 96 threads per row, 2 rows per block, row in registers (8 per thread), vectors of 8 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(192) layer_norm_fwd_bf16_k0_t96(
    const __nv_bfloat16* __restrict__ x,
    const __nv_bfloat16* __restrict__ w,
    const __nv_bfloat16* __restrict__ b,
    float eps,
    float* __restrict__ mean,
    float* __restrict__ rstd,
    __nv_bfloat16* __restrict__ y,
    int N) {
  __shared__ float smem_var[6];
  __shared__ float smem_m2_var[6];
  for (int row_base = (int)blockIdx.x * 2; row_base < N; row_base += (int)gridDim.x * 2) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < N;
    const bool vec_ok = fz_is_aligned<16>(x, row * 768) && fz_is_aligned<16>(w, 0) && fz_is_aligned<16>(b, 0) && fz_is_aligned<16>(y, row * 768);
    float x_r[8];
    float w_r[8];
    float b_r[8];
    float acc_var = 0.0f;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          [[maybe_unused]] const int g_v = (int)threadIdx.x;
          const fz_vec<__nv_bfloat16, 8> x_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(x + (g_v * 8 + row * 768));
          const fz_vec<__nv_bfloat16, 8> w_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(w + g_v * 8);
          const fz_vec<__nv_bfloat16, 8> b_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(b + g_v * 8);
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float x_v2 = __bfloat162float(x_vec.v[lane]);
            const float xf_v = x_v2;
            const float w_v2 = __bfloat162float(w_vec.v[lane]);
            const float b_v2 = __bfloat162float(b_vec.v[lane]);
            x_r[lane] = x_v2;
            w_r[lane] = w_v2;
            b_r[lane] = b_v2;
            acc_var = (acc_var + xf_v);
          }
        }
      } else {
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int k = j * 96 + (int)threadIdx.x;
          const float x_v = __bfloat162float(x[k + row * 768]);
          const float xf = x_v;
          const float w_v = __bfloat162float(w[k]);
          const float b_v = __bfloat162float(b[k]);
          x_r[j] = x_v;
          w_r[j] = w_v;
          b_r[j] = b_v;
          acc_var = (acc_var + xf);
        }
      }
    }
    acc_var = fz_row_reduce<96>(acc_var, fz_sum_op(), smem_var);
    const float mean_of_var = (acc_var / (float)768);
    float m2_var = 0.0f;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          [[maybe_unused]] const int g_v = (int)threadIdx.x;
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float xf_v3 = x_r[lane];
            m2_var = (m2_var + ((xf_v3 - mean_of_var) * (xf_v3 - mean_of_var)));
          }
        }
      } else {
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float xf_v2 = x_r[j];
          m2_var = (m2_var + ((xf_v2 - mean_of_var) * (xf_v2 - mean_of_var)));
        }
      }
    }
    m2_var = fz_row_reduce<96>(m2_var, fz_sum_op(), smem_m2_var);
    const float var = (m2_var / fz_maximum(((float)768 - 0.0f), 0.0f));
    const float mean_v = mean_of_var;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          [[maybe_unused]] const int g_v = (int)threadIdx.x;
          const float ve_v = (var + eps);
          const float rstd_v2 = rsqrtf(ve_v);
          fz_vec<__nv_bfloat16, 8> y_vec;
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float xf_v5 = x_r[lane];
            const float xc_v = (xf_v5 - mean_v);
            const float xn_v = (xc_v * rstd_v2);
            const float xw_v = (xn_v * w_r[lane]);
            const float yf_v = (xw_v + b_r[lane]);
            const float y_v2 = __bfloat162float(__float2bfloat16_rn(yf_v));
            y_vec.v[lane] = __float2bfloat16_rn(y_v2);
          }
          *reinterpret_cast<fz_vec<__nv_bfloat16, 8>*>(y + (g_v * 8 + row * 768)) = y_vec;
        }
      } else {
        const float ve = (var + eps);
        const float rstd_v = rsqrtf(ve);
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int k = j * 96 + (int)threadIdx.x;
          const float xf_v4 = x_r[j];
          const float xc = (xf_v4 - mean_v);
          const float xn = (xc * rstd_v);
          const float xw = (xn * w_r[j]);
          const float yf = (xw + b_r[j]);
          const float y_v = __bfloat162float(__float2bfloat16_rn(yf));
          y[k + row * 768] = __float2bfloat16_rn(y_v);
        }
      }
    }
    if (active && ((int)threadIdx.x == 0)) {
      const float ve_v2 = (var + eps);
      const float rstd_v3 = rsqrtf(ve_v2);
      mean[row] = mean_v;
      rstd[row] = rstd_v3;
    }
  }
}
