// fuserc: graph 'cross_entropy_fwd_bf16', kernel cross_entropy_fwd_bf16_k0_s32 (reduction)
// computes: xf = cast(logits); m = amax(xf); xs = sub(xf, m); e = exp(xs); s = sum(e); ls = log(s); lse2 = add(ls, m); t2 = unsqueeze(target); picked = gather(xf, t2); loss2 = sub(lse2, picked); loss = squeeze(loss2); lse = squeeze(lse2)
// reduces [N, V] over rows of V (N rows), contiguous rows, 32 threads per row, 8 rows per block, vectors of 8 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(256) cross_entropy_fwd_bf16_k0_s32(
    const __nv_bfloat16* __restrict__ logits,
    const long long* __restrict__ target,
    float* __restrict__ loss,
    float* __restrict__ lse,
    int N,
    int V) {
  for (int row_base = (int)blockIdx.x * 8; row_base < N; row_base += (int)gridDim.x * 8) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < N;
    const bool vec_ok = (V % 8 == 0) && fz_is_aligned<16>(logits, V * row);
    fz_lse<float> acc_m = fz_lse_init<float>();
    if (active) {
      if (vec_ok) {
        for (int g_v = (int)threadIdx.x; g_v < V / 8; g_v += 32) {
          const fz_vec<__nv_bfloat16, 8> logits_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(logits + (g_v * 8 + V * row));
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float logits_v2 = __bfloat162float(logits_vec.v[lane]);
            const float xf_v = logits_v2;
            acc_m = fz_lse_push(acc_m, xf_v);
          }
        }
      } else {
        for (int k0 = (int)threadIdx.x; k0 < V; k0 += 256) {
          float held[8];
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + u * 32;
            if (k < V) {
              const float logits_v = __bfloat162float(logits[k + V * row]);
              const float xf = logits_v;
              held[u] = xf;
            }
          }
          #pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int k = k0 + u * 32;
            if (k < V) {
              acc_m = fz_lse_push(acc_m, held[u]);
            }
          }
        }
      }
    }
    acc_m = fz_row_reduce<32>(acc_m, fz_lse_op(), 0);
    const float m = fz_lse_max(acc_m);
    const float s = fz_lse_sum(acc_m);
    if (active && ((int)threadIdx.x == 0)) {
      const float ls = logf(s);
      const float lse2 = (ls + m);
      const long long target_v = target[row];
      const int ix = fz_clamp_index(target_v, V);
      const float logits_v3 = __bfloat162float(logits[ix + V * row]);
      const float xf_v2 = logits_v3;
      const float loss2 = (lse2 - xf_v2);
      loss[row] = loss2;
      lse[row] = lse2;
    }
  }
}
