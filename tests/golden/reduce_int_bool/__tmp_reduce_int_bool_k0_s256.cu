// fuserc: graph 'reduce_int_bool', kernel reduce_int_bool_k0_s256 (reduction)
// computes: si = sum(i); pi = prod(i); mi = min(i)
// reduces [N, M] over rows of M (N rows), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, vectors of 4 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_int_bool_k0_s256(
    const int* __restrict__ i,
    long long* __restrict__ si,
    long long* __restrict__ pi,
    int* __restrict__ mi,
    long long* partials_si,
    long long* partials_pi,
    int* partials_mi,
    unsigned int* counters,
    int M,
    int N) {
  __shared__ long long smem_si[8];
  __shared__ long long smem_pi[8];
  __shared__ int smem_mi[8];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    const bool vec_ok = (M % 4 == 0) && fz_is_aligned<16>(i, M * row);
    long long acc_si = 0LL;
    long long acc_pi = 1LL;
    int acc_mi = 2147483647;
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)blockIdx.y * 256 + (int)threadIdx.x; g_v < M / 4; g_v += (int)gridDim.y * 256) {
          const fz_vec<int, 4> i_vec = *reinterpret_cast<const fz_vec<int, 4>*>(i + (g_v * 4 + M * row));
          #pragma unroll
          for (int lane = 0; lane < 4; ++lane) {
            const int i_v2 = i_vec.v[lane];
            acc_si = (acc_si + (long long)i_v2);
            acc_pi = (acc_pi * (long long)i_v2);
            acc_mi = fz_minimum(acc_mi, i_v2);
          }
        }
      } else {
        for (int k0 = (int)blockIdx.y * 256 + (int)threadIdx.x; k0 < M; k0 += (int)gridDim.y * 1024) {
          int held[4];
          int held_v[4];
          int held_v2[4];
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + (int)gridDim.y * u * 256;
            if (k < M) {
              const int i_v = i[k + M * row];
              held[u] = i_v;
              held_v[u] = i_v;
              held_v2[u] = i_v;
            }
          }
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + (int)gridDim.y * u * 256;
            if (k < M) {
              acc_si = (acc_si + (long long)held[u]);
              acc_pi = (acc_pi * (long long)held_v[u]);
              acc_mi = fz_minimum(acc_mi, held_v2[u]);
            }
          }
        }
      }
    }
    acc_si = fz_row_reduce<256>(acc_si, fz_sum_op(), smem_si);
    acc_pi = fz_row_reduce<256>(acc_pi, fz_prod_op(), smem_pi);
    acc_mi = fz_row_reduce<256>(acc_mi, fz_min_op(), smem_mi);
    if (1 < (int)gridDim.y) {
      if (active && ((int)threadIdx.x == 0)) {
        partials_si[(int)blockIdx.y + (int)gridDim.y * row] = acc_si;
        partials_pi[(int)blockIdx.y + (int)gridDim.y * row] = acc_pi;
        partials_mi[(int)blockIdx.y + (int)gridDim.y * row] = acc_mi;
      }
      const bool last = fz_last_block(counters, row_base, (int)gridDim.y);
      if (!last) continue;
      acc_si = 0LL;
      acc_pi = 1LL;
      acc_mi = 2147483647;
      if (active) {
        for (int g = (int)threadIdx.x; g < (int)gridDim.y; g += 256) {
          acc_si = (acc_si + fz_load_cg(partials_si, g + (int)gridDim.y * row));
          acc_pi = (acc_pi * fz_load_cg(partials_pi, g + (int)gridDim.y * row));
          acc_mi = fz_minimum(acc_mi, fz_load_cg(partials_mi, g + (int)gridDim.y * row));
        }
      }
      acc_si = fz_row_reduce<256>(acc_si, fz_sum_op(), smem_si);
      acc_pi = fz_row_reduce<256>(acc_pi, fz_prod_op(), smem_pi);
      acc_mi = fz_row_reduce<256>(acc_mi, fz_min_op(), smem_mi);
    }
    const long long si_v = acc_si;
    const long long pi_v = acc_pi;
    const int mi_v = acc_mi;
    if (active && ((int)threadIdx.x == 0)) {
      si[row] = si_v;
      pi[row] = pi_v;
      mi[row] = mi_v;
    }
  }
}
