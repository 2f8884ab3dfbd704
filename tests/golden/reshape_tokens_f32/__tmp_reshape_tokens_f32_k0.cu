// fuserc: graph 'reshape_tokens_f32', kernel reshape_tokens_f32_k0 (reduction)
// computes: x3 = reshape(x); lv, lm = var_mean(x3); lve = add(lv, 1e-05); lr = rsqrt(lve)
// reduces [B, 197, 768] over rows of 768 (B * 197 rows), contiguous rows, 32 threads per row, 8 rows per block, vectors of 4 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reshape_tokens_f32_k0(
    const float* __restrict__ x,
    float* __restrict__ lm,
    float* __restrict__ lr,
    int B) {
  for (int row_base = (int)blockIdx.x * 8; row_base < B * 197; row_base += (int)gridDim.x * 8) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < B * 197;
    const bool vec_ok = fz_is_aligned<16>(x, row * 768);
    fz_welford<float> acc_lv = fz_welford_init<float>();
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < 192; g_v += 32) {
          const fz_vec<float, 4> x_vec = *reinterpret_cast<const fz_vec<float, 4>*>(x + (g_v * 4 + row * 768));
          #pragma unroll
          for (int lane = 0; lane < 4; ++lane) {
            const float x_v2 = x_vec.v[lane];
            acc_lv = fz_welford_push(acc_lv, x_v2);
          }
        }
      } else {
        for (int k0 = (int)threadIdx.x; k0 < 768; k0 += 128) {
          float held[4];
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + u * 32;
            if (k < 768) {
              const float x_v = x[k + row * 768];
              held[u] = x_v;
            }
          }
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + u * 32;
            if (k < 768) {
              acc_lv = fz_welford_push(acc_lv, held[u]);
            }
          }
        }
      }
    }
    acc_lv = fz_row_reduce<32>(acc_lv, fz_welford_op(), 0);
    const float lv = fz_welford_var(acc_lv, 0.0f);
    const float lm_v = fz_welford_mean(acc_lv);
    if (active && ((int)threadIdx.x == 0)) {
      const float lve = (lv + 1e-05f);
      const float lr_v = rsqrtf(lve);
      lm[row] = lm_v;
      lr[row] = lr_v;
    }
  }
}
