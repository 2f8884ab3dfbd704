// fuserc: graph 'reduce_int_bool', kernel reduce_int_bool_k1_i64 (reduction)
// computes: count = sum(b); any = max(b)
// reduces [N, M] over rows of N (M rows), strided rows, 8 threads across rows, 32 columns per block, rows split across blocks, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_int_bool_k1_i64(
    const bool* __restrict__ b,
    long long* __restrict__ count,
    bool* __restrict__ any,
    long long* partials_count,
    bool* partials_any,
    unsigned int* counters,
    long long M,
    long long N) {
  __shared__ long long smem_count[256];
  __shared__ bool smem_any[256];
  const long long row = (long long)blockIdx.x * 32 + (long long)threadIdx.x;
  const bool active = (long long)blockIdx.x * 32 + (long long)threadIdx.x < M;
  long long acc_count = 0LL;
  bool acc_any = false;
  if (active) {
    for (long long k0 = (long long)blockIdx.y * 8 + (long long)threadIdx.y; k0 < N; k0 += (long long)gridDim.y * 64) {
      bool held[8];
      bool held_v[8];
      #pragma unroll
      for (int u = 0; u < 8; ++u) {
        const long long k = k0 + (long long)gridDim.y * u * 8;
        if (k < N) {
          const bool b_v = b[row + M * k];
          held[u] = b_v;
          held_v[u] = b_v;
        }
      }
      #pragma unroll
      for (int u = 0; u < 8; ++u) {
        const long long k = k0 + (long long)gridDim.y * u * 8;
        if (k < N) {
          acc_count = (acc_count + (long long)held[u]);
          acc_any = fz_maximum(acc_any, held_v[u]);
        }
      }
    }
  }
  acc_count = fz_column_reduce<32, 8>(acc_count, fz_sum_op(), smem_count);
  acc_any = fz_column_reduce<32, 8>(acc_any, fz_max_op(), smem_any);
  if (1 < (long long)gridDim.y) {
    if (active && ((long long)threadIdx.y == 0)) {
      partials_count[(long long)blockIdx.y + (long long)gridDim.y * row] = acc_count;
      partials_any[(long long)blockIdx.y + (long long)gridDim.y * row] = acc_any;
    }
    const bool last = fz_last_block(counters, (long long)blockIdx.x, (long long)gridDim.y);
    if (!last) return;
    acc_count = 0LL;
    acc_any = false;
    if (active) {
      for (int g = (long long)threadIdx.y; g < (long long)gridDim.y; g += 8) {
        acc_count = (acc_count + fz_load_cg(partials_count, g + (long long)gridDim.y * row));
        acc_any = fz_maximum(acc_any, fz_load_cg(partials_any, g + (long long)gridDim.y * row));
      }
    }
    acc_count = fz_column_reduce<32, 8>(acc_count, fz_sum_op(), smem_count);
    acc_any = fz_column_reduce<32, 8>(acc_any, fz_max_op(), smem_any);
  }
  const long long count_v = acc_count;
  const bool any_v = acc_any;
  if (active && ((long long)threadIdx.y == 0)) {
    count[row] = count_v;
    any[row] = any_v;
  }
}
