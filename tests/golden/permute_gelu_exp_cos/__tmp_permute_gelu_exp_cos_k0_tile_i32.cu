// fuserc: graph 'permute_gelu_exp_cos', kernel permute_gelu_exp_cos_k0_tile_i32 (transpose)
// computes: xp = permute(x); g = gelu(xp); e = exp(g); y = cos(e)
// domain [B, 96, 64], tiles 32x32 over dims (1, 2) through shared memory: x, block 32x8, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) permute_gelu_exp_cos_k0_tile_i32(
    const float* __restrict__ x,
    float* __restrict__ y,
    int B) {
  const int tile_l = (int)blockIdx.x % 2;
  const int tile_j = (int)blockIdx.x / 2 % 3;
  const int outer = (int)blockIdx.x / 6;
  __shared__ float x_tile[1056];
  const int in_j = (int)threadIdx.x + tile_j * 32;
  #pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int in_l = r * 8 + (int)threadIdx.y + tile_l * 32;
    x_tile[r * 264 + (int)threadIdx.x + (int)threadIdx.y * 33] = x[in_j + in_l * 96 + outer * 6144];
  }
  __syncthreads();
  const int out_l = (int)threadIdx.x + tile_l * 32;
  #pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int out_j = r * 8 + (int)threadIdx.y + tile_j * 32;
    const float g = fz_gelu_erf(x_tile[r * 8 + (int)threadIdx.x * 33 + (int)threadIdx.y]);
    const float e = expf(g);
    const float y_v = cosf(e);
    y[out_j * 64 + out_l + outer * 6144] = y_v;
  }
}
