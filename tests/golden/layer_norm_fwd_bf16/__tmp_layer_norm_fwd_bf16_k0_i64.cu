// fuserc: graph 'layer_norm_fwd_bf16', kernel layer_norm_fwd_bf16_k0_i64 (normalization)
// computes: xf = cast(x); var, mean = var_mean(xf); ve = add(var, eps); rstd = rsqrt(ve); xc = sub(xf, mean); xn = mul(xc, rstd); xw = mul(xn, w); yf = add(xw, b); y = cast(yf)
// reduces [N, 768] over rows of 768 (N rows), contiguous rows, 1024 threads per row, 1 row per block, 64-bit indexing
extern "C" __global__ void __launch_bounds__(1024) layer_norm_fwd_bf16_k0_i64(
    const __nv_bfloat16* __restrict__ x,
    const __nv_bfloat16* __restrict__ w,
    const __nv_bfloat16* __restrict__ b,
    float eps,
    float* __restrict__ mean,
    float* __restrict__ rstd,
    __nv_bfloat16* __restrict__ y,
    long long N) {
  __shared__ fz_welford<float> smem_var[32];
  for (long long row_base = (long long)blockIdx.x; row_base < N; row_base += (long long)gridDim.x) {
    const long long row = row_base;
    const bool active = true;
    fz_welford<float> acc_var = fz_welford_init<float>();
    if (active) {
      for (long long k = (long long)threadIdx.x; k < 768; k += 1024) {
        const float x_v = __bfloat162float(x[k + row * 768]);
        const float xf = x_v;
        acc_var = fz_welford_push(acc_var, xf);
      }
    }
    acc_var = fz_row_reduce<1024>(acc_var, fz_welford_op(), smem_var);
    const float var = fz_welford_var(acc_var, 0.0f);
    const float mean_v = fz_welford_mean(acc_var);
    if (active) {
      const float ve = (var + eps);
      const float rstd_v = rsqrtf(ve);
      for (long long k = (long long)threadIdx.x; k < 768; k += 1024) {
        const float x_v2 = __bfloat162float(x[k + row * 768]);
        const float xf_v = x_v2;
        const float xc = (xf_v - mean_v);
        const float xn = (xc * rstd_v);
        const float w_v = __bfloat162float(w[k]);
        const float xw = (xn * w_v);
        const float b_v = __bfloat162float(b[k]);
        const float yf = (xw + b_v);
        const float y_v = __bfloat162float(__float2bfloat16_rn(yf));
        y[k + row * 768] = __float2bfloat16_rn(y_v);
      }
    }
    if (active && ((long long)threadIdx.x == 0)) {
      const float ve_v = (var + eps);
      const float rstd_v2 = rsqrtf(ve_v);
      mean[row] = mean_v;
      rstd[row] = rstd_v2;
    }
  }
}
