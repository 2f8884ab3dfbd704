// fuserc: graph 'rms_norm_fwd_bf16', kernel rms_norm_fwd_bf16_k0_t128 (normalization)
// computes: xf = cast(x); sq = mul(xf, xf); ms = mean(sq); mse = add(ms, 1e-06); r = rsqrt(mse); xn = mul(xf, r); xnb = cast(xn); y = mul(xnb, w)
// reduces [N, H] over rows of H (N rows), contiguous rows, 128 threads per row, 1 row per block, row in registers (8 per thread), 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) rms_norm_fwd_bf16_k0_t128(
    const __nv_bfloat16* __restrict__ x,
    const __nv_bfloat16* __restrict__ w,
    __nv_bfloat16* __restrict__ y,
    int H,
    int N) {
  __shared__ float smem_ms[4];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    float x_r[8];
    float w_r[8];
    float acc_ms = 0.0f;
    if (active) {
      #pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int k = j * 128 + (int)threadIdx.x;
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
    acc_ms = fz_row_reduce<128>(acc_ms, fz_sum_op(), smem_ms);
    const float ms = (acc_ms / (float)H);
    if (active) {
      const float mse = (ms + 1e-06f);
      const float r = rsqrtf(mse);
      #pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int k = j * 128 + (int)threadIdx.x;
        if (k < H) {
          const float xf_v = x_r[j];
          const float xn = (xf_v * r);
          const float xnb = __bfloat162float(__float2bfloat16_rn(xn));
          const float y_v = (xnb * w_r[j]);
          y[k + H * row] = __float2bfloat16_rn(y_v);
        }
      }
    }
  }
}
