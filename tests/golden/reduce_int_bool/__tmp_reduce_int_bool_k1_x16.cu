// fuserc: graph 'reduce_int_bool', kernel reduce_int_bool_k1_x16 (reduction)
// computes: count = sum(b); any = max(b)
// reduces [N, M] over rows of N (M rows), strided rows, 16 threads across rows, 16 columns per block, rows split across blocks, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_int_bool_k1_x16(
    const bool* __restrict__ b,
    long long* __restrict__ count,
    bool* __restrict__ any,
    long long* partials_count,
    bool* partials_any,
    unsigned int* counters,
    int M,
    int N) {
  __shared__ long long smem_count[256];
  __shared__ bool smem_any[256];
  const int row = (int)blockIdx.x * 16 + (int)threadIdx.x;
  const bool active = (int)blockIdx.x * 16 + (int)threadIdx.x < M;
  long long acc_count = 0LL;
  bool acc_any = false;
  if (active) {
    for (int k0 = (int)blockIdx.y * 16 + (int)threadIdx.y; k0 < N; k0 += (int)gridDim.y * 128) {
      bool held[8];
      bool held_v[8];
      #pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int k = k0 + (int)gridDim.y * u * 16;
        if (k < N) {
          const bool b_v = b[row + M * k];
          held[u] = b_v;
          held_v[u] = b_v;
        }
      }
      #pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int k = k0 + (int)gridDim.y * u * 16;
        if (k < N) {
          acc_count = (acc_count + (long long)held[u]);
          acc_any = fz_maximum(acc_any, held_v[u]);
        }
      }
    }
  }
  acc_count = fz_column_reduce<16, 16>(acc_count, fz_sum_op(), smem_count);
  acc_any = fz_column_reduce<16, 16>(acc_any, fz_max_op(), smem_any);
  if (1 < (int)gridDim.y) {
    if (active && ((int)threadIdx.y == 0)) {
      partials_count[(int)blockIdx.y + (int)gridDim.y * row] = acc_count;
      partials_any[(int)blockIdx.y + (int)gridDim.y * row] = acc_any;
    }
    const bool last = fz_last_block(counters, (int)blockIdx.x, (int)gridDim.y);
    if (!last) return;
    acc_count = 0LL;
    acc_any = false;
    if (active) {
      for (int g = (int)threadIdx.y; g < (int)gridDim.y; g += 16) {
        acc_count = (acc_count + fz_load_cg(partials_count, g + (int)gridDim.y * row));
        acc_any = fz_maximum(acc_any, fz_load_cg(partials_any, g + (int)gridDim.y * row));
      }
    }
    acc_count = fz_column_reduce<16, 16>(acc_count, fz_sum_op(), smem_count);
    acc_any = fz_column_reduce<16, 16>(acc_any, fz_max_op(), smem_any);
  }
  const long long count_v = acc_count;
  const bool any_v = acc_any;
  if (active && ((int)threadIdx.y == 0)) {
    count[row] = count_v;
    any[row] = any_v;
  }
}
