// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k2 (pointwise)
// computes: io = iota(); ios = mul(io, size(B * T - 1))
// domain [T * 2 + 1], flat, vector 4, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) shapes_exprs_k2(
    float* __restrict__ io,
    float* __restrict__ ios,
    int T,
    long long fz_size0) {
  const int base = (int)threadIdx.x * 4;
  if (T * 2 + 1 <= base) return;
  if ((base + 4 <= T * 2 + 1) && fz_is_aligned<16>(io, base) && fz_is_aligned<16>(ios, base)) {
    fz_vec<float, 4> io_vec;
    fz_vec<float, 4> ios_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float io_v = (float)fz_iota(0.0, 1.0, base + lane);
      const float ios_v = (io_v * (float)fz_size0);
      io_vec.v[lane] = io_v;
      ios_vec.v[lane] = ios_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(io + base) = io_vec;
    *reinterpret_cast<fz_vec<float, 4>*>(ios + base) = ios_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const int i = base + lane;
    if (i < T * 2 + 1) {
      const float io_v = (float)fz_iota(0.0, 1.0, i);
      const float ios_v = (io_v * (float)fz_size0);
      io[i] = io_v;
      ios[i] = ios_v;
    }
  }
}
