// fuserc: graph 'indexing_rope_bf16', kernel indexing_rope_bf16_k0 (pointwise)
// computes: c = index_select(cos, pos); s = index_select(sin, pos); x1 = slice(x); x2 = slice(x); nx2 = neg(x2); rot = cat(nx2, x1); xc = mul(x, c); rs = mul(rot, s); y = add(xc, rs)
// domain [B, S, 32], flat, vector 2, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) indexing_rope_bf16_k0(
    const __nv_bfloat16* __restrict__ x,
    const long long* __restrict__ pos,
    const __nv_bfloat16* __restrict__ cos_v,
    const __nv_bfloat16* __restrict__ sin_v,
    __nv_bfloat16* __restrict__ y,
    int B,
    int P,
    int S) {
  const int base = (int)blockIdx.x * 256 + (int)threadIdx.x * 2;
  if (B * S * 32 <= base) return;
  if ((base + 2 <= B * S * 32) && fz_is_aligned<4>(x, base) && fz_is_aligned<4>(y, base)) {
    const fz_vec<__nv_bfloat16, 2> x_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 2>*>(x + base);
    fz_vec<__nv_bfloat16, 2> y_vec;
    #pragma unroll
    for (int lane = 0; lane < 2; ++lane) {
      const float x_v = __bfloat162float(x_vec.v[lane]);
      const long long pos_v = pos[(base + lane) / 32 % S];
      const int ix = fz_clamp_index(pos_v, P);
      const float cos_v2 = __bfloat162float(cos_v[ix * 32 + (base + lane) % 32]);
      const float xc = (x_v * cos_v2);
      float rot;
      if ((base + lane) % 32 < 16) {
        const float x_v3 = __bfloat162float(x[base + lane + 16]);
        const float nx2 = (-x_v3);
        rot = nx2;
      } else {
        const float x_v2 = __bfloat162float(x[base + lane - 16]);
        rot = x_v2;
      }
      const float sin_v2 = __bfloat162float(sin_v[ix * 32 + (base + lane) % 32]);
      const float rs = (rot * sin_v2);
      const float y_v = (xc + rs);
      y_vec.v[lane] = __float2bfloat16_rn(y_v);
    }
    *reinterpret_cast<fz_vec<__nv_bfloat16, 2>*>(y + base) = y_vec;
    return;
  }
  for (int lane = 0; lane < 2; ++lane) {
    const int i = base + lane;
    if (i < B * S * 32) {
      const float x_v = __bfloat162float(x[i]);
      const long long pos_v = pos[i / 32 % S];
      const int ix = fz_clamp_index(pos_v, P);
      const float cos_v2 = __bfloat162float(cos_v[ix * 32 + i % 32]);
      const float xc = (x_v * cos_v2);
      float rot;
      if (i % 32 < 16) {
        const float x_v3 = __bfloat162float(x[i + 16]);
        const float nx2 = (-x_v3);
        rot = nx2;
      } else {
        const float x_v2 = __bfloat162float(x[i - 16]);
        rot = x_v2;
      }
      const float sin_v2 = __bfloat162float(sin_v[ix * 32 + i % 32]);
      const float rs = (rot * sin_v2);
      const float y_v = (xc + rs);
      y[i] = __float2bfloat16_rn(y_v);
    }
  }
}
