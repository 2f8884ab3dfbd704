// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k5 (reduction)
// computes: cs = sum(c); cm = div(cs, 6)
// reduces [B, 2, T, 3] over rows of 6 (B * T rows), contiguous rows, 8 threads per row, 32 rows per block, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) shapes_exprs_k5(
    const __half* __restrict__ c,
    float* __restrict__ cm,
    int B,
    int T) {
  for (int row_base = (int)blockIdx.x * 32; row_base < B * T; row_base += (int)gridDim.x * 32) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < B * T;
    float acc_cs = 0.0f;
    if (active) {
      for (int k = (int)threadIdx.x; k < 6; k += 8) {
        const float c_v = __half2float(c[row * 6 + k / 3 + (k % 3) * 2]);
        acc_cs = (acc_cs + c_v);
      }
    }
    acc_cs = fz_row_reduce<8>(acc_cs, fz_sum_op(), 0);
    const float cs = acc_cs;
    if (active && ((int)threadIdx.x == 0)) {
      const float cm_v = (cs / 6.0f);
      cm[row] = cm_v;
    }
  }
}
