// fuserc: graph 'int_ops', kernel int_ops_k0_s256 (reduction)
// computes: r = remainder(a, b); x = bitwise_xor(a, b); pos = gt(a, 0); w = where(pos, x, r); wf = cast(w); y = mul(wf, 0.5); sa = sum(a)
// reduces [N] over rows of N (1 row), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, vectors of 4 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) int_ops_k0_s256(
    const int* __restrict__ a,
    const int* __restrict__ b,
    bool* __restrict__ pos,
    int* __restrict__ w,
    float* __restrict__ y,
    long long* __restrict__ sa,
    long long* partials_sa,
    unsigned int* counters,
    int N) {
  __shared__ long long smem_sa[8];
  for (int row_base = 0; row_base < 1; row_base += (int)gridDim.x) {
    const int row = 0;
    const bool active = true;
    const bool vec_ok = (N % 4 == 0) && fz_is_aligned<16>(a, 0) && fz_is_aligned<16>(b, 0) && fz_is_aligned<4>(pos, 0) && fz_is_aligned<16>(w, 0) && fz_is_aligned<16>(y, 0);
    long long acc_sa = 0LL;
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)blockIdx.y * 256 + (int)threadIdx.x; g_v < N / 4; g_v += (int)gridDim.y * 256) {
          const fz_vec<int, 4> a_vec = *reinterpret_cast<const fz_vec<int, 4>*>(a + g_v * 4);
          const fz_vec<int, 4> b_vec = *reinterpret_cast<const fz_vec<int, 4>*>(b + g_v * 4);
          fz_vec<bool, 4> pos_vec;
          fz_vec<int, 4> w_vec;
          fz_vec<float, 4> y_vec;
          #pragma unroll
          for (int lane = 0; lane < 4; ++lane) {
            const int a_v2 = a_vec.v[lane];
            const bool pos_v2 = (a_v2 > 0);
            const int b_v2 = b_vec.v[lane];
            const int x_v = fz_bitwise_xor(a_v2, b_v2);
            const int r_v = fz_remainder(a_v2, b_v2);
            const int w_v2 = (pos_v2 ? x_v : r_v);
            const float wf_v = (float)w_v2;
            const float y_v2 = (wf_v * 0.5f);
            acc_sa = (acc_sa + (long long)a_v2);
            pos_vec.v[lane] = pos_v2;
            w_vec.v[lane] = w_v2;
            y_vec.v[lane] = y_v2;
          }
          *reinterpret_cast<fz_vec<bool, 4>*>(pos + g_v * 4) = pos_vec;
          *reinterpret_cast<fz_vec<int, 4>*>(w + g_v * 4) = w_vec;
          *reinterpret_cast<fz_vec<float, 4>*>(y + g_v * 4) = y_vec;
        }
      } else {
        for (int k0 = (int)blockIdx.y * 256 + (int)threadIdx.x; k0 < N; k0 += (int)gridDim.y * 1024) {
          int held[4];
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + (int)gridDim.y * u * 256;
            if (k < N) {
              const int a_v = a[k];
              const bool pos_v = (a_v > 0);
              const int b_v = b[k];
              const int x = fz_bitwise_xor(a_v, b_v);
              const int r = fz_remainder(a_v, b_v);
              const int w_v = (pos_v ? x : r);
              const float wf = (float)w_v;
              const float y_v = (wf * 0.5f);
              held[u] = a_v;
              pos[k] = pos_v;
              w[k] = w_v;
              y[k] = y_v;
            }
          }
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + (int)gridDim.y * u * 256;
            if (k < N) {
              acc_sa = (acc_sa + (long long)held[u]);
            }
          }
        }
      }
    }
    acc_sa = fz_row_reduce<256>(acc_sa, fz_sum_op(), smem_sa);
    if (1 < (int)gridDim.y) {
      if (active && ((int)threadIdx.x == 0)) {
        partials_sa[(int)blockIdx.y] = acc_sa;
      }
      const bool last = fz_last_block(counters, row_base, (int)gridDim.y);
      if (!last) continue;
      acc_sa = 0LL;
      if (active) {
        for (int g = (int)threadIdx.x; g < (int)gridDim.y; g += 256) {
          acc_sa = (acc_sa + fz_load_cg(partials_sa, g));
        }
      }
      acc_sa = fz_row_reduce<256>(acc_sa, fz_sum_op(), smem_sa);
    }
    const long long sa_v = acc_sa;
    if (active && ((int)threadIdx.x == 0)) {
      sa[row] = sa_v;
    }
  }
}
