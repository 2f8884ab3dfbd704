// fuserc: graph 'batchnorm_train_fwd_f32', kernel batchnorm_train_fwd_f32_k0_t1024 (normalization)
// computes: v, m = var_mean(x); d = sub(x, m); ve = add(v, 1e-05); r = rsqrt(ve); n = mul(d, r); w3 = reshape(weight); b3 = reshape(bias); nw = mul(n, w3); y = add(nw, b3); ms = reshape(m); vs = reshape(v); vn = mul(vs, size(H * N * W)); vu = div(vn, size(H * N * W - 1)); rm0 = mul(running_mean, 0.9); rm1 = mul(ms, 0.1); rm = add(rm0, rm1); rv0 = mul(running_var, 0.9); rv1 = mul(vu, 0.1); rv = add(rv0, rv1)
// reduces [N, 64, H, W] over rows of H * N * W (64 rows), contiguous rows, 1024 threads per row, 1 row per block, row in registers (32 per thread), 32-bit indexing
extern "C" __global__ void __launch_bounds__(1024) batchnorm_train_fwd_f32_k0_t1024(
    const float* __restrict__ x,
    const float* __restrict__ weight,
    const float* __restrict__ bias,
    const float* running_mean,
    const float* running_var,
    float* __restrict__ y,
    float* rm,
    float* rv,
    int H,
    int N,
    int W,
    long long fz_size0,
    long long fz_size1) {
  __shared__ fz_welford<float> smem_v[32];
  for (int row_base = (int)blockIdx.x; row_base < 64; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    float x_r[32];
    fz_welford<float> acc_v = fz_welford_init<float>();
    if (active) {
      #pragma unroll
      for (int j = 0; j < 32; ++j) {
        const int k = j * 1024 + (int)threadIdx.x;
        if (k < H * N * W) {
          const float x_v = x[k % W + W * (k / W % H) + H * W * row + H * W * (k / (H * W)) * 64];
          x_r[j] = x_v;
          acc_v = fz_welford_push_shifted(acc_v, x_v);
        }
      }
    }
    acc_v = fz_row_reduce<1024>(acc_v, fz_welford_op(), smem_v);
    const float v = fz_welford_var(acc_v, 0.0f);
    const float m = fz_welford_mean(acc_v);
    if (active) {
      const float ve = (v + 1e-05f);
      const float r = rsqrtf(ve);
      const float weight_v = weight[row];
      const float bias_v = bias[row];
      #pragma unroll
      for (int j = 0; j < 32; ++j) {
        const int k = j * 1024 + (int)threadIdx.x;
        if (k < H * N * W) {
          const float d = (x_r[j] - m);
          const float n = (d * r);
          const float nw = (n * weight_v);
          const float y_v = (nw + bias_v);
          y[k % W + W * (k / W % H) + H * W * row + H * W * (k / (H * W)) * 64] = y_v;
        }
      }
    }
    if (active && ((int)threadIdx.x == 0)) {
      const float running_mean_v = running_mean[row];
      const float rm0 = (running_mean_v * 0.9f);
      const float rm1 = (m * 0.1f);
      const float rm_v = (rm0 + rm1);
      const float running_var_v = running_var[row];
      const float rv0 = (running_var_v * 0.9f);
      const float vn = (v * (float)fz_size0);
      const float vu = (vn / (float)fz_size1);
      const float rv1 = (vu * 0.1f);
      const float rv_v = (rv0 + rv1);
      rm[row] = rm_v;
      rv[row] = rv_v;
    }
  }
}
