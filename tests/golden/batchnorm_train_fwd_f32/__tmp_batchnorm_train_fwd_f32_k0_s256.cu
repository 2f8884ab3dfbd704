// fuserc: graph 'batchnorm_train_fwd_f32', kernel batchnorm_train_fwd_f32_k0_s256 (reduction)
// computes: v, m = var_mean(x); ms = reshape(m); vs = reshape(v); vn = mul(vs, size(H * N * W)); vu = div(vn, size(H * N * W - 1)); rm0 = mul(running_mean, 0.9); rm1 = mul(ms, 0.1); rm = add(rm0, rm1); rv0 = mul(running_var, 0.9); rv1 = mul(vu, 0.1); rv = add(rv0, rv1)
// reduces [N, 64, H, W] over rows of H * N * W (64 rows), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) batchnorm_train_fwd_f32_k0_s256(
    const float* __restrict__ x,
    const float* running_mean,
    const float* running_var,
    float* __restrict__ v,
    float* __restrict__ m,
    float* rm,
    float* rv,
    fz_welford<float>* partials_v,
    unsigned int* counters,
    int H,
    int N,
    int W,
    long long fz_size0,
    long long fz_size1) {
  __shared__ fz_welford<float> smem_v[8];
  for (int row_base = (int)blockIdx.x; row_base < 64; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    fz_welford<float> acc_v = fz_welford_init<float>();
    if (active) {
      for (int k0 = (int)blockIdx.y * 256 + (int)threadIdx.x; k0 < H * N * W; k0 += (int)gridDim.y * 512) {
        float held[2];
        #pragma unroll
        for (int u = 0; u < 2; ++u) {
          const int k = k0 + (int)gridDim.y * u * 256;
          if (k < H * N * W) {
            const float x_v = x[k % W + W * (k / W % H) + H * W * row + H * W * (k / (H * W)) * 64];
            held[u] = x_v;
          }
        }
        #pragma unroll
        for (int u = 0; u < 2; ++u) {
          const int k = k0 + (int)gridDim.y * u * 256;
          if (k < H * N * W) {
            acc_v = fz_welford_push(acc_v, held[u]);
          }
        }
      }
    }
    acc_v = fz_row_reduce<256>(acc_v, fz_welford_op(), smem_v);
    if (1 < (int)gridDim.y) {
      if (active && ((int)threadIdx.x == 0)) {
        partials_v[(int)blockIdx.y + (int)gridDim.y * row] = acc_v;
      }
      const bool last = fz_last_block(counters, row_base, (int)gridDim.y);
      if (!last) continue;
      acc_v = fz_welford_init<float>();
      if (active) {
        for (int g = (int)threadIdx.x; g < (int)gridDim.y; g += 256) {
          acc_v = fz_welford_combine(acc_v, fz_load_cg(partials_v, g + (int)gridDim.y * row));
        }
      }
      acc_v = fz_row_reduce<256>(acc_v, fz_welford_op(), smem_v);
    }
    const float v_v = fz_welford_var(acc_v, 0.0f);
    const float m_v = fz_welford_mean(acc_v);
    if (active && ((int)threadIdx.x == 0)) {
      const float running_mean_v = running_mean[row];
      const float rm0 = (running_mean_v * 0.9f);
      const float rm1 = (m_v * 0.1f);
      const float rm_v = (rm0 + rm1);
      const float running_var_v = running_var[row];
      const float rv0 = (running_var_v * 0.9f);
      const float vn = (v_v * (float)fz_size0);
      const float vu = (vn / (float)fz_size1);
      const float rv1 = (vu * 0.1f);
      const float rv_v = (rv0 + rv1);
      v[row] = v_v;
      m[row] = m_v;
      rm[row] = rm_v;
      rv[row] = rv_v;
    }
  }
}
