// fuserc: graph 'indexing_dtype_f32', kernel indexing_dtype_f32_k0 (pointwise)
// computes: sel = index_select(x, rows)
// domain [M, 12], flat, vector 4, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) indexing_dtype_f32_k0(
    const float* __restrict__ x,
    const int* __restrict__ rows,
    float* __restrict__ sel,
    int M,
    int N) {
  const int base = (int)blockIdx.x * 512 + (int)threadIdx.x * 4;
  if (M * 12 <= base) return;
  if ((base + 4 <= M * 12) && fz_is_aligned<16>(sel, base)) {
    fz_vec<float, 4> sel_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const int rows_v = rows[(base + lane) / 12];
      const long long rows_i64 = (long long)rows_v;
      const int ix = fz_clamp_index(rows_i64, N);
      const float x_v = x[ix * 12 + (base + lane) % 12];
      sel_vec.v[lane] = x_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(sel + base) = sel_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const int i = base + lane;
    if (i < M * 12) {
      const int rows_v = rows[i / 12];
      const long long rows_i64 = (long long)rows_v;
      const int ix = fz_clamp_index(rows_i64, N);
      const float x_v = x[ix * 12 + i % 12];
      sel[i] = x_v;
    }
  }
}
