// fuserc: graph 'batchnorm_stats', kernel batchnorm_stats_k0_x32 (reduction)
// computes: var, mean = var_mean(x)
// reduces [N, 64] over rows of N (64 rows), strided rows, 8 threads across rows, 32 columns per block, rows split across blocks, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) batchnorm_stats_k0_x32(
    const float* __restrict__ x,
    float* __restrict__ var,
    float* __restrict__ mean,
    fz_welford<float>* partials_var,
    unsigned int* counters,
    int N) {
  __shared__ fz_welford<float> smem_var[256];
  const int row = (int)blockIdx.x * 32 + (int)threadIdx.x;
  const bool active = true;
  fz_welford<float> acc_var = fz_welford_init<float>();
  if (active) {
    for (int k0 = (int)blockIdx.y * 8 + (int)threadIdx.y; k0 < N; k0 += (int)gridDim.y * 32) {
      float held[4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int k = k0 + (int)gridDim.y * u * 8;
        if (k < N) {
          const float x_v = x[k * 64 + row];
          held[u] = x_v;
        }
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int k = k0 + (int)gridDim.y * u * 8;
        if (k < N) {
          acc_var = fz_welford_push(acc_var, held[u]);
        }
      }
    }
  }
  acc_var = fz_column_reduce<32, 8>(acc_var, fz_welford_op(), smem_var);
  if (1 < (int)gridDim.y) {
    if (active && ((int)threadIdx.y == 0)) {
      partials_var[(int)blockIdx.y + (int)gridDim.y * row] = acc_var;
    }
    const bool last = fz_last_block(counters, (int)blockIdx.x, (int)gridDim.y);
    if (!last) return;
    acc_var = fz_welford_init<float>();
    if (active) {
      for (int g = (int)threadIdx.y; g < (int)gridDim.y; g += 8) {
        acc_var = fz_welford_combine(acc_var, fz_load_cg(partials_var, g + (int)gridDim.y * row));
      }
    }
    acc_var = fz_column_reduce<32, 8>(acc_var, fz_welford_op(), smem_var);
  }
  const float var_v = fz_welford_var(acc_var, 1.0f);
  const float mean_v = fz_welford_mean(acc_var);
  if (active && ((int)threadIdx.y == 0)) {
    var[row] = var_v;
    mean[row] = mean_v;
  }
}
