// fuserc: graph 'segment_set_chain', kernel segment_set_chain_k1_i64 (reduction)
// computes: l = log(es); s = sum(l)
// reduces [N, 32] over rows of 32 (N rows), contiguous rows, 8 threads per row, 32 rows per block, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) segment_set_chain_k1_i64(
    const float* __restrict__ es,
    float* __restrict__ s,
    long long N) {
  for (long long row_base = (long long)blockIdx.x * 32; row_base < N; row_base += (long long)gridDim.x * 32) {
    const long long row = row_base + (long long)threadIdx.y;
    const bool active = row_base + (long long)threadIdx.y < N;
    float acc_s = 0.0f;
    if (active) {
      for (long long k = (long long)threadIdx.x; k < 32; k += 8) {
        const float es_v = es[k + row * 32];
        const float l = logf(es_v);
        acc_s = (acc_s + l);
      }
    }
    acc_s = fz_row_reduce<8>(acc_s, fz_sum_op(), 0);
    const float s_v = acc_s;
    if (active && ((long long)threadIdx.x == 0)) {
      s[row] = s_v;
    }
  }
}
