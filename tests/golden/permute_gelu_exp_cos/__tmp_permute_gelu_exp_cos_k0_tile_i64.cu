// fuserc: graph 'permute_gelu_exp_cos', kernel permute_gelu_exp_cos_k0_tile_i64 (transpose)
// computes: xp = permute(x); g = gelu(xp); e = exp(g); y = cos(e)
// domain [B, 96, 64], tiles 32x32 over dims (1, 2) through shared memory: x, block 32x8, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) permute_gelu_exp_cos_k0_tile_i64(
    const float* __restrict__ x,
    float* __restrict__ y,
    long long B) {
  const long long tile_l = (long long)blockIdx.x % 2;
  const long long tile_j = (long long)blockIdx.x / 2 % 3;
  const long long outer = (long long)blockIdx.x / 6;
  __shared__ float x_tile[1056];
  const long long in_j = (long long)threadIdx.x + tile_j * 32;
  #pragma unroll
  for (int r = 0; r < 4; ++r) {
    const long long in_l = r * 8 + (long long)threadIdx.y + tile_l * 32;
    x_tile[r * 264 + (long long)threadIdx.x + (long long)threadIdx.y * 33] = x[in_j + in_l * 96 + outer * 6144];
  }
  __syncthreads();
  const long long out_l = (long long)threadIdx.x + tile_l * 32;
  #pragma unroll
  for (int r = 0; r < 4; ++r) {
    const long long out_j = r * 8 + (long long)threadIdx.y + tile_j * 32;
    const float g = fz_gelu_erf(x_tile[r * 8 + (long long)threadIdx.x * 33 + (long long)threadIdx.y]);
    const float e = expf(g);
    const float y_v = cosf(e);
    y[out_j * 64 + out_l + outer * 6144] = y_v;
  }
}
