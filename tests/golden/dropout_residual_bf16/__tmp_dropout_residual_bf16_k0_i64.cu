// fuserc: graph 'dropout_residual_bf16', kernel dropout_residual_bf16_k0_i64 (pointwise)
// computes: r = rand(seed, offset); keep = lt(r, 0.9); xs = mul(x, 1.1111111111111112); xd = where(keep, xs, 0.0); y = add(xd, res)
// domain [N, 256], flat, vector 8, block 128, 64-bit indexing
extern "C" __global__ void __launch_bounds__(128) dropout_residual_bf16_k0_i64(
    const __nv_bfloat16* __restrict__ x,
    const __nv_bfloat16* __restrict__ res,
    long long seed,
    long long offset,
    bool* __restrict__ keep,
    __nv_bfloat16* __restrict__ y,
    long long N) {
  const long long base = (long long)blockIdx.x * 1024 + (long long)threadIdx.x * 8;
  if (N * 256 <= base) return;
  if ((base + 8 <= N * 256) && fz_is_aligned<16>(x, base) && fz_is_aligned<16>(res, base) && fz_is_aligned<8>(keep, base) && fz_is_aligned<16>(y, base)) {
    const fz_vec<__nv_bfloat16, 8> x_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(x + base);
    const fz_vec<__nv_bfloat16, 8> res_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(res + base);
    fz_vec<bool, 8> keep_vec;
    fz_vec<__nv_bfloat16, 8> y_vec;
    #pragma unroll
    for (int lane = 0; lane < 8; ++lane) {
      const float r = fuserc_rand_f32(seed, offset, base + lane);
      const bool keep_v = (r < 0.9f);
      const float x_v = __bfloat162float(x_vec.v[lane]);
      const float xs = (x_v * 1.1111112f);
      const float xd = (keep_v ? xs : 0.0f);
      const float res_v = __bfloat162float(res_vec.v[lane]);
      const float y_v = (xd + res_v);
      keep_vec.v[lane] = keep_v;
      y_vec.v[lane] = __float2bfloat16_rn(y_v);
    }
    *reinterpret_cast<fz_vec<bool, 8>*>(keep + base) = keep_vec;
    *reinterpret_cast<fz_vec<__nv_bfloat16, 8>*>(y + base) = y_vec;
    return;
  }
  for (int lane = 0; lane < 8; ++lane) {
    const long long i = base + lane;
    if (i < N * 256) {
      const float r = fuserc_rand_f32(seed, offset, i);
      const bool keep_v = (r < 0.9f);
      const float x_v = __bfloat162float(x[i]);
      const float xs = (x_v * 1.1111112f);
      const float xd = (keep_v ? xs : 0.0f);
      const float res_v = __bfloat162float(res[i]);
      const float y_v = (xd + res_v);
      keep[i] = keep_v;
      y[i] = __float2bfloat16_rn(y_v);
    }
  }
}
