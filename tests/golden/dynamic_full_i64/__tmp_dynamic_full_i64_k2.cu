// fuserc: graph 'dynamic_full_i64', kernel dynamic_full_i64_k2 (pointwise)
// computes: xk = mul(x, k)
// domain [4], flat, vector 4, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) dynamic_full_i64_k2(
    const float* __restrict__ x,
    long long k,
    float* __restrict__ xk) {
  const int base = (int)threadIdx.x * 4;
  if (4 <= base) return;
  if ((base + 4 <= 4) && fz_is_aligned<16>(x, base) && fz_is_aligned<16>(xk, base)) {
    const fz_vec<float, 4> x_vec = *reinterpret_cast<const fz_vec<float, 4>*>(x + base);
    const float k_f32 = (float)k;
    fz_vec<float, 4> xk_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float x_v = x_vec.v[lane];
      const float xk_v = (x_v * k_f32);
      xk_vec.v[lane] = xk_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(xk + base) = xk_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const int i = base + lane;
    if (i < 4) {
      const float x_v = x[i];
      const float k_f32 = (float)k;
      const float xk_v = (x_v * k_f32);
      xk[i] = xk_v;
    }
  }
}
