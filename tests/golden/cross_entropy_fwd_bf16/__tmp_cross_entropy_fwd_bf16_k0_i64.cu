// fuserc: graph 'cross_entropy_fwd_bf16', kernel cross_entropy_fwd_bf16_k0_i64 (reduction)
// computes: xf = cast(logits); m = amax(xf); xs = sub(xf, m); e = exp(xs); s = sum(e); ls = log(s); lse2 = add(ls, m); t2 = unsqueeze(target); picked = gather(xf, t2); loss2 = sub(lse2, picked); loss = squeeze(loss2); lse = squeeze(lse2)
// reduces [N, V] over rows of V (N rows), contiguous rows, 256 threads per row, 1 row per block, rows split across blocks, 64-bit indexing
extern "C" __global__ void __launch_bounds__(256) cross_entropy_fwd_bf16_k0_i64(
    const __nv_bfloat16* __restrict__ logits,
    const long long* __restrict__ target,
    float* __restrict__ loss,
    float* __restrict__ lse,
    fz_lse<float>* partials_m,
    unsigned int* counters,
    long long N,
    long long V) {
  __shared__ fz_lse<float> smem_m[8];
  for (long long row_base = (long long)blockIdx.x; row_base < N; row_base += (long long)gridDim.x) {
    const long long row = row_base;
    const bool active = true;
    fz_lse<float> acc_m = fz_lse_init<float>();
    if (active) {
      for (long long k0 = (long long)blockIdx.y * 256 + (long long)threadIdx.x; k0 < V; k0 += (long long)gridDim.y * 2048) {
        float held[8];
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < V) {
            const float logits_v = __bfloat162float(logits[k + V * row]);
            const float xf = logits_v;
            held[u] = xf;
          }
        }
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const long long k = k0 + (long long)gridDim.y * u * 256;
          if (k < V) {
            acc_m = fz_lse_push(acc_m, held[u]);
          }
        }
      }
    }
    acc_m = fz_row_reduce<256>(acc_m, fz_lse_op(), smem_m);
    if (1 < (long long)gridDim.y) {
      if (active && ((long long)threadIdx.x == 0)) {
        partials_m[(long long)blockIdx.y + (long long)gridDim.y * row] = acc_m;
      }
      const bool last = fz_last_block(counters, row_base, (long long)gridDim.y);
      if (!last) continue;
      acc_m = fz_lse_init<float>();
      if (active) {
        for (int g = (long long)threadIdx.x; g < (long long)gridDim.y; g += 256) {
          acc_m = fz_lse_combine(acc_m, fz_load_cg(partials_m, g + (long long)gridDim.y * row));
        }
      }
      acc_m = fz_row_reduce<256>(acc_m, fz_lse_op(), smem_m);
    }
    const float m = fz_lse_max(acc_m);
    const float s = fz_lse_sum(acc_m);
    if (active && ((long long)threadIdx.x == 0)) {
      const float ls = logf(s);
      const float lse2 = (ls + m);
      const long long target_v = target[row];
      const long long ix = fz_clamp_index(target_v, V);
      const float logits_v2 = __bfloat162float(logits[ix + V * row]);
      const float xf_v = logits_v2;
      const float loss2 = (lse2 - xf_v);
      loss[row] = loss2;
      lse[row] = lse2;
    }
  }
}
