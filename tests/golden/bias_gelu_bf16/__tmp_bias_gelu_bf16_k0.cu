// fuserc: graph 'bias_gelu_bf16', kernel bias_gelu_bf16_k0 (pointwise)
// computes: t = add(x, bias); y = gelu_tanh(t)
// domain [N, 1024], 2-D grid over rows, vector 8, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) bias_gelu_bf16_k0(
    const __nv_bfloat16* __restrict__ x,
    const __nv_bfloat16* __restrict__ bias,
    __nv_bfloat16* __restrict__ y,
    int N) {
  const int col = (int)threadIdx.x * 8;
  for (int row = (int)blockIdx.y; row < N; row += (int)gridDim.y) {
    if (fz_is_aligned<16>(x, col + row * 1024) && fz_is_aligned<16>(bias, col) && fz_is_aligned<16>(y, col + row * 1024)) {
      const fz_vec<__nv_bfloat16, 8> x_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(x + (col + row * 1024));
      const fz_vec<__nv_bfloat16, 8> bias_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(bias + col);
      fz_vec<__nv_bfloat16, 8> y_vec;
      #pragma unroll
      for (int lane = 0; lane < 8; ++lane) {
        const float x_v = __bfloat162float(x_vec.v[lane]);
        const float bias_v = __bfloat162float(bias_vec.v[lane]);
        const float t = (x_v + bias_v);
        const float y_v = fz_gelu_tanh(t);
        y_vec.v[lane] = __float2bfloat16_rn(y_v);
      }
      *reinterpret_cast<fz_vec<__nv_bfloat16, 8>*>(y + (col + row * 1024)) = y_vec;
    } else {
      for (int lane = 0; lane < 8; ++lane) {
        const int j = col + lane;
        const float x_v = __bfloat162float(x[j + row * 1024]);
        const float bias_v = __bfloat162float(bias[j]);
        const float t = (x_v + bias_v);
        const float y_v = fz_gelu_tanh(t);
        y[j + row * 1024] = __float2bfloat16_rn(y_v);
      }
    }
  }
}
