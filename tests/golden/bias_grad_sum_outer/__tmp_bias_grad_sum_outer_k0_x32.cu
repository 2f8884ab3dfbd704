// fuserc: graph 'bias_grad_sum_outer', kernel bias_grad_sum_outer_k0_x32 (reduction)
// computes: db = sum(dy)
// reduces [N, 384] over rows of N (384 rows), strided rows, 8 threads across rows, 32 columns per block, rows split across blocks, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) bias_grad_sum_outer_k0_x32(
    const float* __restrict__ dy,
    float* __restrict__ db,
    float* partials_db,
    unsigned int* counters,
    int N) {
  __shared__ float smem_db[256];
  const int row = (int)blockIdx.x * 32 + (int)threadIdx.x;
  const bool active = true;
  float acc_db = 0.0f;
  if (active) {
    for (int k0 = (int)blockIdx.y * 8 + (int)threadIdx.y; k0 < N; k0 += (int)gridDim.y * 32) {
      float held[4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int k = k0 + (int)gridDim.y * u * 8;
        if (k < N) {
          const float dy_v = dy[k * 384 + row];
          held[u] = dy_v;
        }
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int k = k0 + (int)gridDim.y * u * 8;
        if (k < N) {
          acc_db = (acc_db + held[u]);
        }
      }
    }
  }
  acc_db = fz_column_reduce<32, 8>(acc_db, fz_sum_op(), smem_db);
  if (1 < (int)gridDim.y) {
    if (active && ((int)threadIdx.y == 0)) {
      partials_db[(int)blockIdx.y + (int)gridDim.y * row] = acc_db;
    }
    const bool last = fz_last_block(counters, (int)blockIdx.x, (int)gridDim.y);
    if (!last) return;
    acc_db = 0.0f;
    if (active) {
      for (int g = (int)threadIdx.y; g < (int)gridDim.y; g += 8) {
        acc_db = (acc_db + fz_load_cg(partials_db, g + (int)gridDim.y * row));
      }
    }
    acc_db = fz_column_reduce<32, 8>(acc_db, fz_sum_op(), smem_db);
  }
  const float db_v = acc_db;
  if (active && ((int)threadIdx.y == 0)) {
    db[row] = db_v;
  }
}
