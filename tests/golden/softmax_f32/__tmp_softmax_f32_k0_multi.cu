// fuserc: graph 'softmax_f32', kernel softmax_f32_k0_multi (normalization)
// computes: m = amax(x); xs = sub(x, m); e = exp(xs); s = sum(e); y = div(e, s)
// reduces [N, C] over rows of C (N rows), contiguous rows, 1024 threads per row, 1 row per block, vectors of 4 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(1024) softmax_f32_k0_multi(
    const float* __restrict__ x,
    float* __restrict__ y,
    int C,
    int N) {
  __shared__ fz_lse<float> smem_m[32];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    const bool vec_ok = (C % 4 == 0) && fz_is_aligned<16>(x, C * row) && fz_is_aligned<16>(y, C * row);
    fz_lse<float> acc_m = fz_lse_init<float>();
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < C / 4; g_v += 1024) {
          const fz_vec<float, 4> x_vec = *reinterpret_cast<const fz_vec<float, 4>*>(x + (g_v * 4 + C * row));
          #pragma unroll
          for (int lane = 0; lane < 4; ++lane) {
            const float x_v2 = x_vec.v[lane];
            acc_m = fz_lse_push(acc_m, x_v2);
          }
        }
      } else {
        for (int k0 = (int)threadIdx.x; k0 < C; k0 += 4096) {
          float held[4];
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + u * 1024;
            if (k < C) {
              const float x_v = x[k + C * row];
              held[u] = x_v;
            }
          }
          #pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int k = k0 + u * 1024;
            if (k < C) {
              acc_m = fz_lse_push(acc_m, held[u]);
            }
          }
        }
      }
    }
    acc_m = fz_row_reduce<1024>(acc_m, fz_lse_op(), smem_m);
    const float m = fz_lse_max(acc_m);
    const float s = fz_lse_sum(acc_m);
    const float s_inv = (1.0f / s);
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < C / 4; g_v += 1024) {
          const fz_vec<float, 4> x_vec_v = *reinterpret_cast<const fz_vec<float, 4>*>(x + (g_v * 4 + C * row));
          fz_vec<float, 4> y_vec;
          #pragma unroll
          for (int lane = 0; lane < 4; ++lane) {
            const float x_v4 = x_vec_v.v[lane];
            const float xs_v = (x_v4 - m);
            const float e_v = expf(xs_v);
            const float y_v2 = (e_v * s_inv);
            y_vec.v[lane] = y_v2;
          }
          *reinterpret_cast<fz_vec<float, 4>*>(y + (g_v * 4 + C * row)) = y_vec;
        }
      } else {
        for (int k0_v = (int)threadIdx.x; k0_v < C; k0_v += 4096) {
          #pragma unroll
          for (int u_v = 0; u_v < 4; ++u_v) {
            const int k = k0_v + u_v * 1024;
            if (k < C) {
              const float x_v3 = x[k + C * row];
              const float xs = (x_v3 - m);
              const float e = expf(xs);
              const float y_v = (e * s_inv);
              y[k + C * row] = y_v;
            }
          }
        }
      }
    }
  }
}
