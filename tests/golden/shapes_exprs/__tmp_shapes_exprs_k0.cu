// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k0 (pointwise)
// computes: x3 = reshape(x); xs = slice(x3)
// domain [B, 2, 8], vectors within rows, vector 4, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) shapes_exprs_k0(
    const float* __restrict__ x,
    float* __restrict__ xs,
    int B) {
  const int base = (int)blockIdx.x * 512 + (int)threadIdx.x * 4;
  if (B * 16 <= base) return;
  const int col = base % 8;
  const int row = base / 8;
  if (fz_is_aligned<16>(x, col + (row / 2) * 48 + (row % 2) * 16 + 8) && fz_is_aligned<16>(xs, col + row * 8)) {
    const fz_vec<float, 4> x_vec = *reinterpret_cast<const fz_vec<float, 4>*>(x + (col + (row / 2) * 48 + (row % 2) * 16 + 8));
    fz_vec<float, 4> xs_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float x_v = x_vec.v[lane];
      xs_vec.v[lane] = x_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(xs + (col + row * 8)) = xs_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const int i = base + lane;
    if (i < B * 16) {
      const float x_v = x[(i / 16) * 48 + i % 8 + (i / 8 % 2) * 16 + 8];
      xs[i] = x_v;
    }
  }
}
