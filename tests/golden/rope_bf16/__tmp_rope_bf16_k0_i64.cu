// fuserc: graph 'rope_bf16', kernel rope_bf16_k0_i64 (pointwise)
// computes: x1 = slice(q); x2 = slice(q); nx2 = neg(x2); rot = cat(nx2, x1); cb = broadcast_in_dim(cos); sb = broadcast_in_dim(sin); a = mul(q, cb); b = mul(rot, sb); y = add(a, b)
// domain [B, S, 8, 64], vectors within rows, vector 8, block 128, 64-bit indexing
extern "C" __global__ void __launch_bounds__(128) rope_bf16_k0_i64(
    const __nv_bfloat16* __restrict__ q,
    const __nv_bfloat16* __restrict__ cos_v,
    const __nv_bfloat16* __restrict__ sin_v,
    __nv_bfloat16* __restrict__ y,
    long long B,
    long long S) {
  const long long base = (long long)blockIdx.x * 1024 + (long long)threadIdx.x * 8;
  if (B * S * 512 <= base) return;
  const long long col = base % 64;
  const long long row = base / 64;
  if (fz_is_aligned<16>(q, col + row * 64) && fz_is_aligned<16>(cos_v, col + (row / 8 % S) * 64) && fz_is_aligned<16>(sin_v, col + (row / 8 % S) * 64) && fz_is_aligned<16>(y, col + row * 64)) {
    const fz_vec<__nv_bfloat16, 8> q_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(q + (col + row * 64));
    const fz_vec<__nv_bfloat16, 8> cos_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(cos_v + (col + (row / 8 % S) * 64));
    const fz_vec<__nv_bfloat16, 8> sin_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(sin_v + (col + (row / 8 % S) * 64));
    fz_vec<__nv_bfloat16, 8> y_vec;
    #pragma unroll
    for (int lane = 0; lane < 8; ++lane) {
      const float q_v = __bfloat162float(q_vec.v[lane]);
      const float cos_v2 = __bfloat162float(cos_vec.v[lane]);
      const float a = (q_v * cos_v2);
      float rot;
      if (col + lane < 32) {
        const float q_v3 = __bfloat162float(q[col + lane + row * 64 + 32]);
        const float nx2 = (-q_v3);
        rot = nx2;
      } else {
        const float q_v2 = __bfloat162float(q[col + lane + row * 64 - 32]);
        rot = q_v2;
      }
      const float sin_v2 = __bfloat162float(sin_vec.v[lane]);
      const float b = (rot * sin_v2);
      const float y_v = (a + b);
      y_vec.v[lane] = __float2bfloat16_rn(y_v);
    }
    *reinterpret_cast<fz_vec<__nv_bfloat16, 8>*>(y + (col + row * 64)) = y_vec;
    return;
  }
  for (int lane = 0; lane < 8; ++lane) {
    const long long i = base + lane;
    if (i < B * S * 512) {
      const float q_v = __bfloat162float(q[i]);
      const float cos_v2 = __bfloat162float(cos_v[i % 64 + (i / 512 % S) * 64]);
      const float a = (q_v * cos_v2);
      float rot;
      if (i % 64 < 32) {
        const float q_v3 = __bfloat162float(q[i + 32]);
        const float nx2 = (-q_v3);
        rot = nx2;
      } else {
        const float q_v2 = __bfloat162float(q[i - 32]);
        rot = q_v2;
      }
      const float sin_v2 = __bfloat162float(sin_v[i % 64 + (i / 512 % S) * 64]);
      const float b = (rot * sin_v2);
      const float y_v = (a + b);
      y[i] = __float2bfloat16_rn(y_v);
    }
  }
}
