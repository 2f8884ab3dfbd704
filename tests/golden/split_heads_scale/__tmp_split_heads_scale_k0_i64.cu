// fuserc: graph 'split_heads_scale', kernel split_heads_scale_k0_i64 (pointwise)
// computes: x4 = reshape(x); xp = permute(x4); y = mul(xp, 0.125)
// domain [B, 8, S, 64], vectors within rows, vector 8, block 128, 64-bit indexing
extern "C" __global__ void __launch_bounds__(128) split_heads_scale_k0_i64(
    const __half* __restrict__ x,
    __half* __restrict__ y,
    long long B,
    long long S) {
  const long long base = (long long)blockIdx.x * 1024 + (long long)threadIdx.x * 8;
  if (B * S * 512 <= base) return;
  const long long col = base % 64;
  const long long row = base / 64;
  if (fz_is_aligned<16>(x, col + (row % S) * 512 + (row / S % 8) * 64 + S * (row / S / 8) * 512) && fz_is_aligned<16>(y, col + row * 64)) {
    const fz_vec<__half, 8> x_vec = *reinterpret_cast<const fz_vec<__half, 8>*>(x + (col + (row % S) * 512 + (row / S % 8) * 64 + S * (row / S / 8) * 512));
    fz_vec<__half, 8> y_vec;
    #pragma unroll
    for (int lane = 0; lane < 8; ++lane) {
      const float x_v = __half2float(x_vec.v[lane]);
      const float y_v = (x_v * 0.125f);
      y_vec.v[lane] = __float2half_rn(y_v);
    }
    *reinterpret_cast<fz_vec<__half, 8>*>(y + (col + row * 64)) = y_vec;
    return;
  }
  for (int lane = 0; lane < 8; ++lane) {
    const long long i = base + lane;
    if (i < B * S * 512) {
      const float x_v = __half2float(x[i % 64 + (i / 64 % S) * 512 + (i / (S * 64) % 8) * 64 + S * (i / (S * 64) / 8) * 512]);
      const float y_v = (x_v * 0.125f);
      y[i] = __float2half_rn(y_v);
    }
  }
}
