// fuserc: graph 'layer_norm_fwd_bf16', kernel layer_norm_fwd_bf16_k0_t128 (normalization)
// computes: xf = cast(x); var, mean = var_mean(xf); ve = add(var, eps); rstd = rsqrt(ve); xc = sub(xf, mean); xn = mul(xc, rstd); xw = mul(xn, w); yf = add(xw, b); y = cast(yf)
// reduces [N, 768] over rows of 768 (N rows), contiguous rows, 128 threads per row, 1 row per block, row in registers (6 per thread), 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) layer_norm_fwd_bf16_k0_t128(
    const __nv_bfloat16* __restrict__ x,
    const __nv_bfloat16* __restrict__ w,
    const __nv_bfloat16* __restrict__ b,
    float eps,
    float* __restrict__ mean,
    float* __restrict__ rstd,
    __nv_bfloat16* __restrict__ y,
    int N) {
  __shared__ fz_welford<float> smem_var[4];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    float x_r[6];
    float w_r[6];
    float b_r[6];
    fz_welford<float> acc_var = fz_welford_init<float>();
    if (active) {
      #pragma unroll
      for (int j = 0; j < 6; ++j) {
        const int k = j * 128 + (int)threadIdx.x;
        const float x_v = __bfloat162float(x[k + row * 768]);
        const float xf = x_v;
        const float w_v = __bfloat162float(w[k]);
        const float b_v = __bfloat162float(b[k]);
        x_r[j] = x_v;
        w_r[j] = w_v;
        b_r[j] = b_v;
        acc_var = fz_welford_push(acc_var, xf);
      }
    }
    acc_var = fz_row_reduce<128>(acc_var, fz_welford_op(), smem_var);
    const float var = fz_welford_var(acc_var, 0.0f);
    const float mean_v = fz_welford_mean(acc_var);
    if (active) {
      const float ve = (var + eps);
      const float rstd_v = rsqrtf(ve);
      #pragma unroll
      for (int j = 0; j < 6; ++j) {
        const int k = j * 128 + (int)threadIdx.x;
        const float xf_v = x_r[j];
        const float xc = (xf_v - mean_v);
        const float xn = (xc * rstd_v);
        const float xw = (xn * w_r[j]);
        const float yf = (xw + b_r[j]);
        const float y_v = __bfloat162float(__float2bfloat16_rn(yf));
        y[k + row * 768] = __float2bfloat16_rn(y_v);
      }
    }
    if (active && ((int)threadIdx.x == 0)) {
      const float ve_v = (var + eps);
      const float rstd_v2 = rsqrtf(ve_v);
      mean[row] = mean_v;
      rstd[row] = rstd_v2;
    }
  }
}
