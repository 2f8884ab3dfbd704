// fuserc: graph 'reduce_dims', kernel reduce_dims_k2_s256 (reduction)
// computes: v_last = var(x)
// reduces [A, B, C] over rows of C (A * B rows), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, vectors of 8 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) reduce_dims_k2_s256(
    const __half* __restrict__ x,
    __half* __restrict__ v_last,
    fz_welford<float>* partials_v_last,
    unsigned int* counters,
    int A,
    int B,
    int C) {
  __shared__ fz_welford<float> smem_v_last[8];
  for (int row_base = (int)blockIdx.x; row_base < A * B; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    const bool vec_ok = (C % 8 == 0) && fz_is_aligned<16>(x, C * row);
    fz_welford<float> acc_v_last = fz_welford_init<float>();
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)blockIdx.y * 256 + (int)threadIdx.x; g_v < C / 8; g_v += (int)gridDim.y * 256) {
          const fz_vec<__half, 8> x_vec = *reinterpret_cast<const fz_vec<__half, 8>*>(x + (g_v * 8 + C * row));
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float x_v2 = __half2float(x_vec.v[lane]);
            acc_v_last = fz_welford_push(acc_v_last, x_v2);
          }
        }
      } else {
        for (int k0 = (int)blockIdx.y * 256 + (int)threadIdx.x; k0 < C; k0 += (int)gridDim.y * 2048) {
          float held[8];
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + (int)gridDim.y * u * 256;
            if (k < C) {
              const float x_v = __half2float(x[k + C * row]);
              held[u] = x_v;
            }
          }
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + (int)gridDim.y * u * 256;
            if (k < C) {
              acc_v_last = fz_welford_push(acc_v_last, held[u]);
            }
          }
        }
      }
    }
    acc_v_last = fz_row_reduce<256>(acc_v_last, fz_welford_op(), smem_v_last);
    if (1 < (int)gridDim.y) {
      if (active && ((int)threadIdx.x == 0)) {
        partials_v_last[(int)blockIdx.y + (int)gridDim.y * row] = acc_v_last;
      }
      const bool last = fz_last_block(counters, row_base, (int)gridDim.y);
      if (!last) continue;
      acc_v_last = fz_welford_init<float>();
      if (active) {
        for (int g = (int)threadIdx.x; g < (int)gridDim.y; g += 256) {
          acc_v_last = fz_welford_combine(acc_v_last, fz_load_cg(partials_v_last, g + (int)gridDim.y * row));
        }
      }
      acc_v_last = fz_row_reduce<256>(acc_v_last, fz_welford_op(), smem_v_last);
    }
    const float v_last_v = fz_welford_var(acc_v_last, 0.0f);
    if (active && ((int)threadIdx.x == 0)) {
      v_last[row] = __float2half_rn(v_last_v);
    }
  }
}
