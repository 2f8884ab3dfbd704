// fuserc: graph 'softmax_f32', kernel softmax_f32_k0_t8 (normalization)
// computes: m = amax(x); xs = sub(x, m); e = exp(xs); s = sum(e); y = div(e, s)
// reduces [N, C] over rows of C (N rows), contiguous rows, 8 threads per row, 16 rows per block, row in registers (8 per thread), 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) softmax_f32_k0_t8(
    const float* __restrict__ x,
    float* __restrict__ y,
    int C,
    int N) {
  for (int row_base = (int)blockIdx.x * 16; row_base < N; row_base += (int)gridDim.x * 16) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < N;
    float x_r[8];
    float acc_m = (-__int_as_float(0x7f800000));
    if (active) {
      #pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int k = j * 8 + (int)threadIdx.x;
        if (k < C) {
          const float x_v = x[k + C * row];
          x_r[j] = x_v;
          acc_m = fz_maximum(acc_m, x_v);
        }
      }
    }
    acc_m = fz_row_reduce<8>(acc_m, fz_max_op(), 0);
    const float m = acc_m;
    float acc_s = 0.0f;
    if (active) {
      #pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int k = j * 8 + (int)threadIdx.x;
        if (k < C) {
          const float xs = (x_r[j] - m);
          const float e = expf(xs);
          acc_s = (acc_s + e);
        }
      }
    }
    acc_s = fz_row_reduce<8>(acc_s, fz_sum_op(), 0);
    const float s = acc_s;
    if (active) {
      #pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int k = j * 8 + (int)threadIdx.x;
        if (k < C) {
          const float xs_v = (x_r[j] - m);
          const float e_v = expf(xs_v);
          const float y_v = (e_v / s);
          y[k + C * row] = y_v;
        }
      }
    }
  }
}
