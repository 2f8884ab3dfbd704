// fuserc: graph 'kv_cache_append_bf16', kernel kv_cache_append_bf16_k0 (pointwise)
// computes: y = cat(cache, new)
// domain [B, 8, S + T, 64], vectors within rows, vector 8, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) kv_cache_append_bf16_k0(
    const __nv_bfloat16* __restrict__ cache,
    const __nv_bfloat16* __restrict__ new_v,
    __nv_bfloat16* __restrict__ y,
    int B,
    int S,
    int T) {
  const int base = (int)blockIdx.x * 1024 + (int)threadIdx.x * 8;
  if (B * S * 512 + B * T * 512 <= base) return;
  const int col = base % 64;
  const int row = base / 64;
  if (fz_is_aligned<16>(new_v, -T * 64 + col + (row % (S + T)) * 64 + S * (row / (S + T)) * 64) && fz_is_aligned<16>(cache, col + (row % (S + T)) * 64 + T * (row / (S + T)) * 64) && fz_is_aligned<16>(y, col + row * 64)) {
    const fz_vec<__nv_bfloat16, 8> new_vec = fz_vec_load_if<8>((-T + row % (S + T) < S) * (0 <= -T + row % (S + T)), new_v, -T * 64 + col + (row % (S + T)) * 64 + S * (row / (S + T)) * 64);
    const fz_vec<__nv_bfloat16, 8> cache_vec = fz_vec_load_if<8>(row % (S + T) < T, cache, col + (row % (S + T)) * 64 + T * (row / (S + T)) * 64);
    fz_vec<__nv_bfloat16, 8> y_vec;
    #pragma unroll
    for (int lane = 0; lane < 8; ++lane) {
      float y_v;
      if (row % (S + T) < T) {
        const float cache_v = __bfloat162float(cache_vec.v[lane]);
        y_v = cache_v;
      } else {
        const float new_v2 = __bfloat162float(new_vec.v[lane]);
        y_v = new_v2;
      }
      y_vec.v[lane] = __float2bfloat16_rn(y_v);
    }
    *reinterpret_cast<fz_vec<__nv_bfloat16, 8>*>(y + (col + row * 64)) = y_vec;
    return;
  }
  for (int lane = 0; lane < 8; ++lane) {
    const int i = base + lane;
    if (i < B * S * 512 + B * T * 512) {
      float y_v;
      if (i / 64 % (S + T) < T) {
        const float cache_v = __bfloat162float(cache[i % 64 + (i / 64 % (S + T)) * 64 + T * (i / (S * 64 + T * 64)) * 64]);
        y_v = cache_v;
      } else {
        const float new_v2 = __bfloat162float(new_v[-T * 64 + i % 64 + (i / 64 % (S + T)) * 64 + S * (i / (S * 64 + T * 64)) * 64]);
        y_v = new_v2;
      }
      y[i] = __float2bfloat16_rn(y_v);
    }
  }
}
