// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k6 (pointwise)
// computes: iob = broadcast_in_dim(io)
// domain [T * 2 + 1, B], flat, vector 4, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) shapes_exprs_k6(
    const float* __restrict__ io,
    float* __restrict__ iob,
    int B,
    int T) {
  const int base = (int)blockIdx.x * 512 + (int)threadIdx.x * 4;
  if (B + B * T * 2 <= base) return;
  if ((base + 4 <= B + B * T * 2) && fz_is_aligned<16>(iob, base)) {
    fz_vec<float, 4> iob_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float io_v = io[(base + lane) / B];
      iob_vec.v[lane] = io_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(iob + base) = iob_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const int i = base + lane;
    if (i < B + B * T * 2) {
      const float io_v = io[i / B];
      iob[i] = io_v;
    }
  }
}
