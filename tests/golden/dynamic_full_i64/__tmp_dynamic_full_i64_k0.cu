// fuserc: graph 'dynamic_full_i64', kernel dynamic_full_i64_k0 (pointwise)
// computes: f = full(); i = iota(); ib = broadcast_in_dim(i); fi = mul(f, ib); y = add(fi, x)
// domain [K, 4], vectors within rows, vector 4, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) dynamic_full_i64_k0(
    const float* __restrict__ x,
    float* __restrict__ y,
    int K) {
  const int base = (int)blockIdx.x * 512 + (int)threadIdx.x * 4;
  if (K * 4 <= base) return;
  const int col = base % 4;
  const int row = base / 4;
  if (fz_is_aligned<16>(x, col) && fz_is_aligned<16>(y, col + row * 4)) {
    const fz_vec<float, 4> x_vec = *reinterpret_cast<const fz_vec<float, 4>*>(x + col);
    const float i_v = (float)fz_iota(0.0, 1.0, row);
    const float fi = (1.5f * i_v);
    fz_vec<float, 4> y_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float x_v = x_vec.v[lane];
      const float y_v = (fi + x_v);
      y_vec.v[lane] = y_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(y + (col + row * 4)) = y_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const int i = base + lane;
    if (i < K * 4) {
      const float i_v = (float)fz_iota(0.0, 1.0, i / 4);
      const float fi = (1.5f * i_v);
      const float x_v = x[i % 4];
      const float y_v = (fi + x_v);
      y[i] = y_v;
    }
  }
}
