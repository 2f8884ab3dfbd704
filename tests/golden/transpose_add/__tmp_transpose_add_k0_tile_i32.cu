// fuserc: graph 'transpose_add', kernel transpose_add_k0_tile_i32 (transpose)
// computes: yt = permute(y); z = add(x, yt)
// domain [A, B], tiles 32x32 over dims (0, 1) through shared memory: y, block 32x8, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) transpose_add_k0_tile_i32(
    const float* __restrict__ x,
    const float* __restrict__ y,
    float* __restrict__ z,
    int A,
    int B) {
  const int tile_l = (int)blockIdx.x % ((B + 32 - 1) / 32);
  const int tile_j = (int)blockIdx.x / ((B + 32 - 1) / 32) % ((A + 32 - 1) / 32);
  __shared__ float y_tile[1056];
  const int in_j = (int)threadIdx.x + tile_j * 32;
  #pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int in_l = r * 8 + (int)threadIdx.y + tile_l * 32;
    if ((in_j < A) && (in_l < B)) {
      y_tile[r * 264 + (int)threadIdx.x + (int)threadIdx.y * 33] = y[in_j + A * in_l];
    }
  }
  __syncthreads();
  const int out_l = (int)threadIdx.x + tile_l * 32;
  #pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int out_j = r * 8 + (int)threadIdx.y + tile_j * 32;
    if ((out_l < B) && (out_j < A)) {
      const float x_v = x[out_l + B * out_j];
      const float z_v = (x_v + y_tile[r * 8 + (int)threadIdx.x * 33 + (int)threadIdx.y]);
      z[out_l + B * out_j] = z_v;
    }
  }
}
