// fuserc: graph 'reduce_int_bool', kernel reduce_int_bool_k0_s32 (reduction)
// computes: si = sum(i); pi = prod(i); mi = min(i)
// reduces [N, M] over rows of M (N rows), contiguous rows, 32 threads per row, 8 rows per block, vectors of 4 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_int_bool_k0_s32(
    const int* __restrict__ i,
    long long* __restrict__ si,
    long long* __restrict__ pi,
    int* __restrict__ mi,
    int M,
    int N) {
  for (int row_base = (int)blockIdx.x * 8; row_base < N; row_base += (int)gridDim.x * 8) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < N;
    const bool vec_ok = (M % 4 == 0) && fz_is_aligned<16>(i, M * row);
    long long acc_si = 0LL;
    long long acc_pi = 1LL;
    int acc_mi = 2147483647;
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < M / 4; g_v += 32) {
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
        for (int k0 = (int)threadIdx.x; k0 < M; k0 += 128) {
          int held[4];
          int held_v[4];
          int held_v2[4];
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + u * 32;
            if (k < M) {
              const int i_v = i[k + M * row];
              held[u] = i_v;
              held_v[u] = i_v;
              held_v2[u] = i_v;
            }
          }
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + u * 32;
            if (k < M) {
              acc_si = (acc_si + (long long)held[u]);
              acc_pi = (acc_pi * (long long)held_v[u]);
              acc_mi = fz_minimum(acc_mi, held_v2[u]);
            }
          }
        }
      }
    }
    acc_si = fz_row_reduce<32>(acc_si, fz_sum_op(), 0);
    acc_pi = fz_row_reduce<32>(acc_pi, fz_prod_op(), 0);
    acc_mi = fz_row_reduce<32>(acc_mi, fz_min_op(), 0);
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
