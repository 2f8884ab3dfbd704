// fuserc: graph 'segment_set_chain', kernel segment_set_chain_k0_i64 (pointwise)
// computes: e = exp(x); es = segment_set(e)
// domain [N, 32], flat, vector 4, block 128, 64-bit indexing
extern "C" __global__ void __launch_bounds__(128) segment_set_chain_k0_i64(
    const float* __restrict__ x,
    float* __restrict__ es,
    long long N) {
  const long long base = (long long)blockIdx.x * 512 + (long long)threadIdx.x * 4;
  if (N * 32 <= base) return;
  if ((base + 4 <= N * 32) && fz_is_aligned<16>(x, base) && fz_is_aligned<16>(es, base)) {
    const fz_vec<float, 4> x_vec = *reinterpret_cast<const fz_vec<float, 4>*>(x + base);
    fz_vec<float, 4> es_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float x_v = x_vec.v[lane];
      const float e = expf(x_v);
      es_vec.v[lane] = e;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(es + base) = es_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const long long i = base + lane;
    if (i < N * 32) {
      const float x_v = x[i];
      const float e = expf(x_v);
      es[i] = e;
    }
  }
}
