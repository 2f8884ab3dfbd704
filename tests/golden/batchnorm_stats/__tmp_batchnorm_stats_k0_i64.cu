// fuserc: graph 'batchnorm_stats', kernel batchnorm_stats_k0_i64 (reduction)
// computes: var, mean = var_mean(x)
// reduces [N, 64] over rows of N (64 rows), strided rows, 8 threads across rows, 32 columns per block, rows split across blocks, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) batchnorm_stats_k0_i64(
    const float* __restrict__ x,
    float* __restrict__ var,
    float* __restrict__ mean,
    fz_welford<float>* partials_var,
    unsigned int* counters,
    long long N) {
  __shared__ fz_welford<float> smem_var[256];
  const long long row = (long long)blockIdx.x * 32 + (long long)threadIdx.x;
  const bool active = true;
  fz_welford<float> acc_var = fz_welford_init<float>();
  if (active) {
    for (long long k0 = (long long)blockIdx.y * 8 + (long long)threadIdx.y; k0 < N; k0 += (long long)gridDim.y * 32) {
      float held[4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const long long k = k0 + (long long)gridDim.y * u * 8;
        if (k < N) {
          const float x_v = x[k * 64 + row];
          held[u] = x_v;
        }
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const long long k = k0 + (long long)gridDim.y * u * 8;
        if (k < N) {
          acc_var = fz_welford_push(acc_var, held[u]);
        }
      }
    }
  }
  acc_var = fz_column_reduce<32, 8>(acc_var, fz_welford_op(), smem_var);
  if (1 < (long long)gridDim.y) {
    if (active && ((long long)threadIdx.y == 0)) {
      partials_var[(long long)blockIdx.y + (long long)gridDim.y * row] = acc_var;
    }
    const bool last = fz_last_block(counters, (long long)blockIdx.x, (long long)gridDim.y);
    if (!last) return;
    acc_var = fz_welford_init<float>();
    if (active) {
      for (int g = (long long)threadIdx.y; g < (long long)gridDim.y; g += 8) {
        acc_var = fz_welford_combine(acc_var, fz_load_cg(partials_var, g + (long long)gridDim.y * row));
      }
    }
    acc_var = fz_column_reduce<32, 8>(acc_var, fz_welford_op(), smem_var);
  }
  const float var_v = fz_welford_var(acc_var, 1.0f);
  const float mean_v = fz_welford_mean(acc_var);
  if (active && ((long long)threadIdx.y == 0)) {
    var[row] = var_v;
    mean[row] = mean_v;
  }
}
