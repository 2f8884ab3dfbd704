// fuserc: graph 'reduce_int_bool', kernel reduce_int_bool_k0_i32 (reduction)
// computes: si = sum(i); pi = prod(i); mi = min(i)
// reduces [N, M] over rows of M (N rows), contiguous rows, 128 threads per row, 1 row per block, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) reduce_int_bool_k0_i32(
    const int* __restrict__ i,
    long long* __restrict__ si,
    long long* __restrict__ pi,
    int* __restrict__ mi,
    int M,
    int N) {
  __shared__ long long smem_si[4];
  __shared__ long long smem_pi[4];
  __shared__ int smem_mi[4];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    long long acc_si = 0LL;
    long long acc_pi = 1LL;
    int acc_mi = 2147483647;
    if (active) {
      for (int k = (int)threadIdx.x; k < M; k += 128) {
        const int i_v = i[k + M * row];
        acc_si = (acc_si + (long long)i_v);
        acc_pi = (acc_pi * (long long)i_v);
        acc_mi = fz_minimum(acc_mi, i_v);
      }
    }
    acc_si = fz_row_reduce<128>(acc_si, fz_sum_op(), smem_si);
    acc_pi = fz_row_reduce<128>(acc_pi, fz_prod_op(), smem_pi);
    acc_mi = fz_row_reduce<128>(acc_mi, fz_min_op(), smem_mi);
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
