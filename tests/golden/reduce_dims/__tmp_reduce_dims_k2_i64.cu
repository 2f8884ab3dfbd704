// fuserc: graph 'reduce_dims', kernel reduce_dims_k2_i64 (reduction)
// computes: v_last = var(x)
// reduces [A, B, C] over rows of C (A * B rows), contiguous rows, 16 threads per row, 8 rows per block, 64-bit indexing
extern "C" __global__ void __launch_bounds__(128) reduce_dims_k2_i64(
    const __half* __restrict__ x,
    __half* __restrict__ v_last,
    long long A,
    long long B,
    long long C) {
  for (long long row_base = (long long)blockIdx.x * 8; row_base < A * B; row_base += (long long)gridDim.x * 8) {
    const long long row = row_base + (long long)threadIdx.y;
    const bool active = row_base + (long long)threadIdx.y < A * B;
    fz_welford<float> acc_v_last = fz_welford_init<float>();
    if (active) {
      for (long long k = (long long)threadIdx.x; k < C; k += 16) {
        const float x_v = __half2float(x[k + C * row]);
        acc_v_last = fz_welford_push(acc_v_last, x_v);
      }
    }
    acc_v_last = fz_row_reduce<16>(acc_v_last, fz_welford_op(), 0);
    const float v_last_v = fz_welford_var(acc_v_last, 0.0f);
    if (active && ((long long)threadIdx.x == 0)) {
      v_last[row] = __float2half_rn(v_last_v);
    }
  }
}
