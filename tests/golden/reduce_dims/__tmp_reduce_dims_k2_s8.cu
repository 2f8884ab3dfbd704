// fuserc: graph 'reduce_dims', kernel reduce_dims_k2_s8 (reduction)
// computes: v_last = var(x)
// reduces [A, B, C] over rows of C (A * B rows), contiguous rows, 8 threads per row, 32 rows per block, vectors of 8 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_dims_k2_s8(
    const __half* __restrict__ x,
    __half* __restrict__ v_last,
    int A,
    int B,
    int C) {
  for (int row_base = (int)blockIdx.x * 32; row_base < A * B; row_base += (int)gridDim.x * 32) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < A * B;
    const bool vec_ok = (C % 8 == 0) && fz_is_aligned<16>(x, C * row);
    fz_welford<float> acc_v_last = fz_welford_init<float>();
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < C / 8; g_v += 8) {
          const fz_vec<__half, 8> x_vec = *reinterpret_cast<const fz_vec<__half, 8>*>(x + (g_v * 8 + C * row));
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float x_v2 = __half2float(x_vec.v[lane]);
            acc_v_last = fz_welford_push(acc_v_last, x_v2);
          }
        }
      } else {
        for (int k = (int)threadIdx.x; k < C; k += 8) {
          const float x_v = __half2float(x[k + C * row]);
          acc_v_last = fz_welford_push(acc_v_last, x_v);
        }
      }
    }
    acc_v_last = fz_row_reduce<8>(acc_v_last, fz_welford_op(), 0);
    const float v_last_v = fz_welford_var(acc_v_last, 0.0f);
    if (active && ((int)threadIdx.x == 0)) {
      v_last[row] = __float2half_rn(v_last_v);
    }
  }
}
