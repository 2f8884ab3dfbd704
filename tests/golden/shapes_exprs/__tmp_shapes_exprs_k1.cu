// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k1 (pointwise)
// computes: pp = pad(p)
// domain [T + T / 2 + 2, T % 3 + 4], flat, vector 4, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) shapes_exprs_k1(
    const float* __restrict__ p,
    float* __restrict__ pp,
    int T) {
  const int base = (int)blockIdx.x * 512 + (int)threadIdx.x * 4;
  if (T * 4 + (T / 2) * 4 + (T % 3) * 2 + T * (T % 3) + (T / 2) * (T % 3) + 8 <= base) return;
  if ((base + 4 <= T * 4 + (T / 2) * 4 + (T % 3) * 2 + T * (T % 3) + (T / 2) * (T % 3) + 8) && fz_is_aligned<16>(pp, base)) {
    fz_vec<float, 4> pp_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      float pp_v;
      if ((0 <= -(T / 2) + (base + lane) / (T % 3 + 4)) && (-(T / 2) + (base + lane) / (T % 3 + 4) < T + 1) && ((base + lane) % (T % 3 + 4) < 4)) {
        const float p_v = p[-(T / 2) * 4 + ((base + lane) / (T % 3 + 4)) * 4 + (base + lane) % (T % 3 + 4)];
        pp_v = p_v;
      } else {
        pp_v = 2.0f;
      }
      pp_vec.v[lane] = pp_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(pp + base) = pp_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const int i = base + lane;
    if (i < T * 4 + (T / 2) * 4 + (T % 3) * 2 + T * (T % 3) + (T / 2) * (T % 3) + 8) {
      float pp_v;
      if ((0 <= -(T / 2) + i / (T % 3 + 4)) && (-(T / 2) + i / (T % 3 + 4) < T + 1) && (i % (T % 3 + 4) < 4)) {
        const float p_v = p[-(T / 2) * 4 + (i / (T % 3 + 4)) * 4 + i % (T % 3 + 4)];
        pp_v = p_v;
      } else {
        pp_v = 2.0f;
      }
      pp[i] = pp_v;
    }
  }
}
