// fuserc: graph 'permute_gelu_exp_cos', kernel permute_gelu_exp_cos_k0_i64 (pointwise)
// computes: xp = permute(x); g = gelu(xp); e = exp(g); y = cos(e)
// domain [B, 96, 64], flat, vector 4, block 128, 64-bit indexing
extern "C" __global__ void __launch_bounds__(128) permute_gelu_exp_cos_k0_i64(
    const float* __restrict__ x,
    float* __restrict__ y,
    long long B) {
  const long long base = (long long)blockIdx.x * 512 + (long long)threadIdx.x * 4;
  if ((base + 4 <= B * 6144) && fz_is_aligned<16>(y, base)) {
    fz_vec<float, 4> y_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float x_v = x[((base + lane) / 6144) * 6144 + ((base + lane) % 64) * 96 + (base + lane) / 64 % 96];
      const float g = fz_gelu_erf(x_v);
      const float e = expf(g);
      const float y_v = cosf(e);
      y_vec.v[lane] = y_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(y + base) = y_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const long long i = base + lane;
    const float x_v = x[(i / 6144) * 6144 + (i % 64) * 96 + i / 64 % 96];
    const float g = fz_gelu_erf(x_v);
    const float e = expf(g);
    const float y_v = cosf(e);
    y[i] = y_v;
  }
}
