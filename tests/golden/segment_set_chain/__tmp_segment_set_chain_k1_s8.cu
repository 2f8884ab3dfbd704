// fuserc: graph 'segment_set_chain', kernel segment_set_chain_k1_s8 (reduction)
// computes: l = log(es); s = sum(l)
// reduces [N, 32] over rows of 32 (N rows), contiguous rows, 8 threads per row, 32 rows per block, vectors of 4 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) segment_set_chain_k1_s8(
    const float* __restrict__ es,
    float* __restrict__ s,
    int N) {
  for (int row_base = (int)blockIdx.x * 32; row_base < N; row_base += (int)gridDim.x * 32) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < N;
    const bool vec_ok = fz_is_aligned<16>(es, row * 32);
    float acc_s = 0.0f;
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < 8; g_v += 8) {
          const fz_vec<float, 4> es_vec = *reinterpret_cast<const fz_vec<float, 4>*>(es + (g_v * 4 + row * 32));
          #pragma unroll
          for (int lane = 0; lane < 4; ++lane) {
            const float es_v2 = es_vec.v[lane];
            const float l_v = logf(es_v2);
            acc_s = (acc_s + l_v);
          }
        }
      } else {
        for (int k = (int)threadIdx.x; k < 32; k += 8) {
          const float es_v = es[k + row * 32];
          const float l = logf(es_v);
          acc_s = (acc_s + l);
        }
      }
    }
    acc_s = fz_row_reduce<8>(acc_s, fz_sum_op(), 0);
    const float s_v = acc_s;
    if (active && ((int)threadIdx.x == 0)) {
      s[row] = s_v;
    }
  }
}
