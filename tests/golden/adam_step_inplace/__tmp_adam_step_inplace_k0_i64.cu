// fuserc: graph 'adam_step_inplace', kernel adam_step_inplace_k0_i64 (pointwise)
// computes: m0 = mul(m, beta1); ob1 = sub(1.0, beta1); m1 = mul(g, ob1); m_new = add(m0, m1); v0 = mul(v, beta2); ob2 = sub(1.0, beta2); g2 = mul(g, g); v1 = mul(g2, ob2); v_new = add(v0, v1); mh = div(m_new, bc1); vh = div(v_new, bc2); sv = sqrt(vh); den = add(sv, eps); upd = div(mh, den); step = mul(upd, lr); p_new = sub(p, step)
// domain [N], flat, vector 4, block 32, 64-bit indexing
extern "C" __global__ void __launch_bounds__(32) adam_step_inplace_k0_i64(
    const float* p,
    const float* __restrict__ g,
    const float* m,
    const float* v,
    float lr,
    float beta1,
    float beta2,
    float eps,
    float bc1,
    float bc2,
    float* m_new,
    float* v_new,
    float* p_new,
    long long N) {
  const long long base = (long long)blockIdx.x * 128 + (long long)threadIdx.x * 4;
  if (N <= base) return;
  if ((base + 4 <= N) && fz_is_aligned<16>(m, base) && fz_is_aligned<16>(g, base) && fz_is_aligned<16>(v, base) && fz_is_aligned<16>(p, base) && fz_is_aligned<16>(m_new, base) && fz_is_aligned<16>(v_new, base) && fz_is_aligned<16>(p_new, base)) {
    const fz_vec<float, 4> m_vec = *reinterpret_cast<const fz_vec<float, 4>*>(m + base);
    const fz_vec<float, 4> g_vec = *reinterpret_cast<const fz_vec<float, 4>*>(g + base);
    const fz_vec<float, 4> v_vec = *reinterpret_cast<const fz_vec<float, 4>*>(v + base);
    const fz_vec<float, 4> p_vec = *reinterpret_cast<const fz_vec<float, 4>*>(p + base);
    const float ob1 = (1.0f - beta1);
    const float ob2 = (1.0f - beta2);
    fz_vec<float, 4> m_new_vec;
    fz_vec<float, 4> v_new_vec;
    fz_vec<float, 4> p_new_vec;
    #pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const float m_v = m_vec.v[lane];
      const float m0 = (m_v * beta1);
      const float g_v = g_vec.v[lane];
      const float m1 = (g_v * ob1);
      const float m_new_v = (m0 + m1);
      const float v_v = v_vec.v[lane];
      const float v0 = (v_v * beta2);
      const float g2 = (g_v * g_v);
      const float v1 = (g2 * ob2);
      const float v_new_v = (v0 + v1);
      const float p_v = p_vec.v[lane];
      const float mh = (m_new_v / bc1);
      const float vh = (v_new_v / bc2);
      const float sv = sqrtf(vh);
      const float den = (sv + eps);
      const float upd = (mh / den);
      const float step = (upd * lr);
      const float p_new_v = (p_v - step);
      m_new_vec.v[lane] = m_new_v;
      v_new_vec.v[lane] = v_new_v;
      p_new_vec.v[lane] = p_new_v;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(m_new + base) = m_new_vec;
    *reinterpret_cast<fz_vec<float, 4>*>(v_new + base) = v_new_vec;
    *reinterpret_cast<fz_vec<float, 4>*>(p_new + base) = p_new_vec;
    return;
  }
  for (int lane = 0; lane < 4; ++lane) {
    const long long i = base + lane;
    if (i < N) {
      const float m_v = m[i];
      const float m0 = (m_v * beta1);
      const float g_v = g[i];
      const float ob1 = (1.0f - beta1);
      const float m1 = (g_v * ob1);
      const float m_new_v = (m0 + m1);
      const float v_v = v[i];
      const float v0 = (v_v * beta2);
      const float g2 = (g_v * g_v);
      const float ob2 = (1.0f - beta2);
      const float v1 = (g2 * ob2);
      const float v_new_v = (v0 + v1);
      const float p_v = p[i];
      const float mh = (m_new_v / bc1);
      const float vh = (v_new_v / bc2);
      const float sv = sqrtf(vh);
      const float den = (sv + eps);
      const float upd = (mh / den);
      const float step = (upd * lr);
      const float p_new_v = (p_v - step);
      m_new[i] = m_new_v;
      v_new[i] = v_new_v;
      p_new[i] = p_new_v;
    }
  }
}
