// fuserc: graph 'reduce_dims', kernel reduce_dims_k2_s32 (reduction)
// computes: v_last = var(x)
// reduces [A, B, C] over rows of C (A * B rows), contiguous rows, 32 threads per row, 8 rows per block, vectors of 8 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_dims_k2_s32(
    const __half* __restrict__ x,
    __half* __restrict__ v_last,
    int A,
    int B,
    int C) {
  for (int row_base = (int)blockIdx.x * 8; row_base < A * B; row_base += (int)gridDim.x * 8) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < A * B;
    const bool vec_ok = (C % 8 == 0) && fz_is_aligned<16>(x, C * row);
    fz_welford<float> acc_v_last = fz_welford_init<float>();
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < C / 8; g_v += 32) {
          const fz_vec<__half, 8> x_vec = *reinterpret_cast<const fz_vec<__half, 8>*>(x + (g_v * 8 + C * row));
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float x_v2 = __half2float(x_vec.v[lane]);
            acc_v_last = fz_welford_push(acc_v_last, x_v2);
          }
        }
      } else {
        for (int k0 = (int)threadIdx.x; k0 < C; k0 += 256) {
          float held[8];
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + u * 32;
            if (k < C) {
              const float x_v = __half2float(x[k + C * row]);
              held[u] = x_v;
            }
          }
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + u * 32;
            if (k < C) {
              acc_v_last = fz_welford_push(acc_v_last, held[u]);
            }
          }
        }
      }
    }
    acc_v_last = fz_row_reduce<32>(acc_v_last, fz_welford_op(), 0);
    const float v_last_v = fz_welford_var(acc_v_last, 0.0f);
    if (active && ((int)threadIdx.x == 0)) {
      v_last[row] = __float2half_rn(v_last_v);
    }
  }
}
