// fuserc: graph 'indexing_dtype_f32', kernel indexing_dtype_f32_k1 (pointwise)
// computes: gat = gather(x, cols); after = mul(gat, y)
// domain [N, K], flat, vector 2, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) indexing_dtype_f32_k1(
    const float* __restrict__ x,
    const long long* __restrict__ cols,
    const float* __restrict__ y,
    float* __restrict__ gat,
    float* __restrict__ after,
    int K,
    int N) {
  const int base = (int)blockIdx.x * 256 + (int)threadIdx.x * 2;
  if (K * N <= base) return;
  if ((base + 2 <= K * N) && fz_is_aligned<16>(cols, base) && fz_is_aligned<8>(y, base) && fz_is_aligned<8>(gat, base) && fz_is_aligned<8>(after, base)) {
    const fz_vec<long long, 2> cols_vec = *reinterpret_cast<const fz_vec<long long, 2>*>(cols + base);
    const fz_vec<float, 2> y_vec = *reinterpret_cast<const fz_vec<float, 2>*>(y + base);
    fz_vec<float, 2> gat_vec;
    fz_vec<float, 2> after_vec;
    #pragma unroll
    for (int lane = 0; lane < 2; ++lane) {
      const long long cols_v = cols_vec.v[lane];
      const int ix = fz_clamp_index(cols_v, 12);
      const float x_v = x[ix + ((base + lane) / K) * 12];
      const float y_v = y_vec.v[lane];
      const float after_v = (x_v * y_v);
      gat_vec.v[lane] = x_v;
      after_vec.v[lane] = after_v;
    }
    *reinterpret_cast<fz_vec<float, 2>*>(gat + base) = gat_vec;
    *reinterpret_cast<fz_vec<float, 2>*>(after + base) = after_vec;
    return;
  }
  for (int lane = 0; lane < 2; ++lane) {
    const int i = base + lane;
    if (i < K * N) {
      const long long cols_v = cols[i];
      const int ix = fz_clamp_index(cols_v, 12);
      const float x_v = x[ix + (i / K) * 12];
      const float y_v = y[i];
      const float after_v = (x_v * y_v);
      gat[i] = x_v;
      after[i] = after_v;
    }
  }
}
