// fuserc: graph 'dynamic_full_i64', kernel dynamic_full_i64_k1 (pointwise)
// computes: r = reshape(y)
// domain [K * 2, 2], flat, vector 4, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) dynamic_full_i64_k1(
    const float* __restrict__ y,
    float* __restrict__ r,
    int K) {
  const int base = (int)blockIdx.x * 512 + (int)threadIdx.x * 4;
  if (K * 4 <= base) return;
  if ((base + 4 <= K * 4) && fz_is_aligned<16>(y, base) && fz_is_aligned<16>(r, base)) {
    const fz_vec<float, 4> y_vec = *reinterpret_cast<const fz_vec<float, 4>*>(y + base);
    fz_vec<float, 4> r_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float y_v = y_vec.v[lane];
      r_vec.v[lane] = y_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(r + base) = r_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const int i = base + lane;
    if (i < K * 4) {
      const float y_v = y[i];
      r[i] = y_v;
    }
  }
}
