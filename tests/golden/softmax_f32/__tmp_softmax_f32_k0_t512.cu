// fuserc: graph 'softmax_f32', kernel softmax_f32_k0_t512 (normalization)
// computes: m = amax(x); xs = sub(x, m); e = exp(xs); s = sum(e); y = div(e, s)
// reduces [N, C] over rows of C (N rows), contiguous rows, 512 threads per row, 1 row per block, row in registers (32 per thread), vectors of 4 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(512) softmax_f32_k0_t512(
    const float* __restrict__ x,
    float* __restrict__ y,
    int C,
    int N) {
  __shared__ float smem_m[16];
  __shared__ float smem_s[16];
  for (int row_base = (int)blockIdx.x; row_base < N; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    const bool vec_ok = (C % 4 == 0) && fz_is_aligned<16>(x, C * row) && fz_is_aligned<16>(y, C * row);
    float x_r[32];
    float acc_m = (-__int_as_float(0x7f800000));
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          [[maybe_unused]] const int g_v = j * 512 + (int)threadIdx.x;
          if (g_v * 4 < C) {
            const fz_vec<float, 4> x_vec = *reinterpret_cast<const fz_vec<float, 4>*>(x + (g_v * 4 + C * row));
            #pragma unroll
            for (int lane = 0; lane < 4; ++lane) {
              const float x_v2 = x_vec.v[lane];
              x_r[j * 4 + lane] = x_v2;
              acc_m = fz_maximum(acc_m, x_v2);
            }
          }
        }
      } else {
        #pragma unroll
        for (int j = 0; j < 32; ++j) {
          const int k = j * 512 + (int)threadIdx.x;
          if (k < C) {
            const float x_v = x[k + C * row];
            x_r[j] = x_v;
            acc_m = fz_maximum(acc_m, x_v);
          }
        }
      }
    }
    acc_m = fz_row_reduce<512>(acc_m, fz_max_op(), smem_m);
    const float m = acc_m;
    float acc_s = 0.0f;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          [[maybe_unused]] const int g_v = j * 512 + (int)threadIdx.x;
          if (g_v * 4 < C) {
            #pragma unroll
            for (int lane = 0; lane < 4; ++lane) {
              const float xs_v = (x_r[j * 4 + lane] - m);
              const float e_v = expf(xs_v);
              acc_s = (acc_s + e_v);
            }
          }
        }
      } else {
        #pragma unroll
        for (int j = 0; j < 32; ++j) {
          const int k = j * 512 + (int)threadIdx.x;
          if (k < C) {
            const float xs = (x_r[j] - m);
            const float e = expf(xs);
            acc_s = (acc_s + e);
          }
        }
      }
    }
    acc_s = fz_row_reduce<512>(acc_s, fz_sum_op(), smem_s);
    const float s = acc_s;
    const float s_inv = (1.0f / s);
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          [[maybe_unused]] const int g_v = j * 512 + (int)threadIdx.x;
          if (g_v * 4 < C) {
            fz_vec<float, 4> y_vec;
            #pragma unroll
            for (int lane = 0; lane < 4; ++lane) {
              const float xs_v3 = (x_r[j * 4 + lane] - m);
              const float e_v3 = expf(xs_v3);
              const float y_v2 = (e_v3 * s_inv);
              y_vec.v[lane] = y_v2;
            }
            *reinterpret_cast<fz_vec<float, 4>*>(y + (g_v * 4 + C * row)) = y_vec;
          }
        }
      } else {
        #pragma unroll
        for (int j = 0; j < 32; ++j) {
          const int k = j * 512 + (int)threadIdx.x;
          if (k < C) {
            const float xs_v2 = (x_r[j] - m);
            const float e_v2 = expf(xs_v2);
            const float y_v = (e_v2 * s_inv);
            y[k + C * row] = y_v;
          }
        }
      }
    }
  }
}
