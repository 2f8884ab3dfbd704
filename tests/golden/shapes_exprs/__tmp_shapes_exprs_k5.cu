// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k5 (pointwise)
// computes: q2 = reshape(q); qe = expand(q2)
// domain [B, T + 1, 2], vectors within rows, vector 2, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) shapes_exprs_k5(
    const __nv_bfloat16* __restrict__ q,
    __nv_bfloat16* __restrict__ qe,
    int B,
    int T) {
  const int base = (int)blockIdx.x * 256 + (int)threadIdx.x * 2;
  if (B * 2 + B * T * 2 <= base) return;
  const int col = base % 2;
  const int row = base / 2;
  if (fz_is_aligned<4>(q, col + (row % (T + 1)) * 2) && fz_is_aligned<4>(qe, col + row * 2)) {
    const fz_vec<__nv_bfloat16, 2> q_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 2>*>(q + (col + (row % (T + 1)) * 2));
    fz_vec<__nv_bfloat16, 2> qe_vec;
    #pragma unroll
    for (int lane = 0; lane < 2; ++lane) {
      const float q_v = __bfloat162float(q_vec.v[lane]);
      qe_vec.v[lane] = __float2bfloat16_rn(q_v);
    }
    *reinterpret_cast<fz_vec<__nv_bfloat16, 2>*>(qe + (col + row * 2)) = qe_vec;
    return;
  }
  for (int lane = 0; lane < 2; ++lane) {
    const int i = base + lane;
    if (i < B * 2 + B * T * 2) {
      const float q_v = __bfloat162float(q[i % 2 + (i / 2 % (T + 1)) * 2]);
      qe[i] = __float2bfloat16_rn(q_v);
    }
  }
}
