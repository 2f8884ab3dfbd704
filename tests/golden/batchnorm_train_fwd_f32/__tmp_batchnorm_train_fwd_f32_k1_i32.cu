// fuserc: graph 'batchnorm_train_fwd_f32', kernel batchnorm_train_fwd_f32_k1_i32 (pointwise)
// computes: d = sub(x, m); ve = add(v, 1e-05); r = rsqrt(ve); n = mul(d, r); w3 = reshape(weight); b3 = reshape(bias); nw = mul(n, w3); y = add(nw, b3)
// domain [N, 64, H, W], flat, vector 4, block 128, 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) batchnorm_train_fwd_f32_k1_i32(
    const float* __restrict__ x,
    const float* __restrict__ weight,
    const float* __restrict__ bias,
    const float* __restrict__ v,
    const float* __restrict__ m,
    float* __restrict__ y,
    int H,
    int N,
    int W) {
  const int base = (int)blockIdx.x * 512 + (int)threadIdx.x * 4;
  if (H * N * W * 64 <= base) return;
  if ((base + 4 <= H * N * W * 64) && fz_is_aligned<16>(x, base) && fz_is_aligned<16>(y, base)) {
    const fz_vec<float, 4> x_vec = *reinterpret_cast<const fz_vec<float, 4>*>(x + base);
    fz_vec<float, 4> y_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float x_v = x_vec.v[lane];
      const float m_v = m[(base + lane) / (H * W) % 64];
      const float d = (x_v - m_v);
      const float v_v = v[(base + lane) / (H * W) % 64];
      const float ve = (v_v + 1e-05f);
      const float r = rsqrtf(ve);
      const float n = (d * r);
      const float weight_v = weight[(base + lane) / (H * W) % 64];
      const float nw = (n * weight_v);
      const float bias_v = bias[(base + lane) / (H * W) % 64];
      const float y_v = (nw + bias_v);
      y_vec.v[lane] = y_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(y + base) = y_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const int i = base + lane;
    if (i < H * N * W * 64) {
      const float x_v = x[i];
      const float m_v = m[i / (H * W) % 64];
      const float d = (x_v - m_v);
      const float v_v = v[i / (H * W) % 64];
      const float ve = (v_v + 1e-05f);
      const float r = rsqrtf(ve);
      const float n = (d * r);
      const float weight_v = weight[i / (H * W) % 64];
      const float nw = (n * weight_v);
      const float bias_v = bias[i / (H * W) % 64];
      const float y_v = (nw + bias_v);
      y[i] = y_v;
    }
  }
}
