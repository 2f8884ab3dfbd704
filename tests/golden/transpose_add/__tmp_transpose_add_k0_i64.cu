// fuserc: graph 'transpose_add', kernel transpose_add_k0_i64 (pointwise)
// computes: yt = permute(y); z = add(x, yt)
// domain [A, B], flat, vector 4, block 128, 64-bit indexing
extern "C" __global__ void __launch_bounds__(128) transpose_add_k0_i64(
    const float* __restrict__ x,
    const float* __restrict__ y,
    float* __restrict__ z,
    long long A,
    long long B) {
  const long long base = (long long)blockIdx.x * 512 + (long long)threadIdx.x * 4;
  if (A * B <= base) return;
  if ((base + 4 <= A * B) && fz_is_aligned<16>(x, base) && fz_is_aligned<16>(z, base)) {
    const fz_vec<float, 4> x_vec = *reinterpret_cast<const fz_vec<float, 4>*>(x + base);
    fz_vec<float, 4> z_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float x_v = x_vec.v[lane];
      const float y_v = y[(base + lane) / B + A * ((base + lane) % B)];
      const float z_v = (x_v + y_v);
      z_vec.v[lane] = z_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(z + base) = z_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const long long i = base + lane;
    if (i < A * B) {
      const float x_v = x[i];
      const float y_v = y[i / B + A * (i % B)];
      const float z_v = (x_v + y_v);
      z[i] = z_v;
    }
  }
}
