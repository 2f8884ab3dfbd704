// fuserc: graph 'reshape_tokens_f32', kernel reshape_tokens_f32_k1 (reduction)
// computes: x3_recomputed = reshape(x); ld = sub(x3_recomputed, lm); ln = mul(ld, lr); ln2 = reshape(ln); pooled = mean(ln)
// reduces [B, 197, 768] over rows of 197 (B * 768 rows), strided rows, 8 threads across rows, 32 columns per block, rows split across blocks, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reshape_tokens_f32_k1(
    const float* __restrict__ x,
    const float* __restrict__ lm,
    const float* __restrict__ lr,
    float* __restrict__ ln2,
    float* __restrict__ pooled,
    float* partials_pooled,
    unsigned int* counters,
    int B) {
  __shared__ float smem_pooled[256];
  const int row = (int)blockIdx.x * 32 + (int)threadIdx.x;
  const bool active = true;
  float acc_pooled = 0.0f;
  if (active) {
    for (int k0 = (int)blockIdx.y * 8 + (int)threadIdx.y; k0 < 197; k0 += (int)gridDim.y * 32) {
      float held[4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int k = k0 + (int)gridDim.y * u * 8;
        if (k < 197) {
          const float x_v = x[k * 768 + (row / 768) * 151296 + row % 768];
          const float lm_v = lm[k + (row / 768) * 197];
          const float ld = (x_v - lm_v);
          const float lr_v = lr[k + (row / 768) * 197];
          const float ln = (ld * lr_v);
          held[u] = ln;
          ln2[k * 768 + (row / 768) * 151296 + row % 768] = ln;
        }
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int k = k0 + (int)gridDim.y * u * 8;
        if (k < 197) {
          acc_pooled = (acc_pooled + held[u]);
        }
      }
    }
  }
  acc_pooled = fz_column_reduce<32, 8>(acc_pooled, fz_sum_op(), smem_pooled);
  if (1 < (int)gridDim.y) {
    if (active && ((int)threadIdx.y == 0)) {
      partials_pooled[(int)blockIdx.y + (int)gridDim.y * row] = acc_pooled;
    }
    const bool last = fz_last_block(counters, (int)blockIdx.x, (int)gridDim.y);
    if (!last) return;
    acc_pooled = 0.0f;
    if (active) {
      for (int g = (int)threadIdx.y; g < (int)gridDim.y; g += 8) {
        acc_pooled = (acc_pooled + fz_load_cg(partials_pooled, g + (int)gridDim.y * row));
      }
    }
    acc_pooled = fz_column_reduce<32, 8>(acc_pooled, fz_sum_op(), smem_pooled);
  }
  const float pooled_v = (acc_pooled / (float)197);
  if (active && ((int)threadIdx.y == 0)) {
    pooled[row] = pooled_v;
  }
}
