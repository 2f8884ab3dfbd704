// fuserc: graph 'transpose_add', kernel transpose_add_k0_tile_i64 (transpose)
// computes: yt = permute(y); z = add(x, yt)
// domain [A, B], tiles 32x32 over dims (0, 1) through shared memory: y, block 32x8, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) transpose_add_k0_tile_i64(
    const float* __restrict__ x,
    const float* __restrict__ y,
    float* __restrict__ z,
    long long A,
    long long B) {
  const long long tile_l = (long long)blockIdx.x % ((B + 32 - 1) / 32);
  const long long tile_j = (long long)blockIdx.x / ((B + 32 - 1) / 32) % ((A + 32 - 1) / 32);
  __shared__ float y_tile[1056];
  const long long in_j = (long long)threadIdx.x + tile_j * 32;
  #pragma unroll
  for (int r = 0; r < 4; ++r) {
    const long long in_l = r * 8 + (long long)threadIdx.y + tile_l * 32;
    if ((in_j < A) && (in_l < B)) {
      y_tile[r * 264 + (long long)threadIdx.x + (long long)threadIdx.y * 33] = y[in_j + A * in_l];
    }
  }
  __syncthreads();
  const long long out_l = (long long)threadIdx.x + tile_l * 32;
  #pragma unroll
  for (int r = 0; r < 4; ++r) {
    const long long out_j = r * 8 + (long long)threadIdx.y + tile_j * 32;
    if ((out_l < B) && (out_j < A)) {
      const float x_v = x[out_l + B * out_j];
      const float z_v = (x_v + y_tile[r * 8 + (long long)threadIdx.x * 33 + (long long)threadIdx.y]);
      z[out_l + B * out_j] = z_v;
    }
  }
}
