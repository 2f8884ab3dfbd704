// fuserc: graph 'embedding_pos_layernorm_bf16', kernel embedding_pos_layernorm_bf16_k0 (normalization)
// computes: flat = reshape(ids); rows = index_select(table, flat); emb = reshape(rows); p = slice(pos); h = add(emb, p); hf = cast(h); var, mean = var_mean(hf); ve = add(var, 1e-05); rstd = rsqrt(ve); hc = sub(hf, mean); hn = mul(hc, rstd); hw = mul(hn, w); yf = add(hw, b); y = cast(yf)
// reduces [B, S, 768] over rows of 768 (B * S rows), contiguous rows, 128 threads per row, 1 row per block, row in registers (6 per thread), 32-bit indexing
extern "C" __global__ void __launch_bounds__(128) embedding_pos_layernorm_bf16_k0(
    const int* __restrict__ ids,
    const __nv_bfloat16* __restrict__ table,
    const __nv_bfloat16* __restrict__ pos,
    const __nv_bfloat16* __restrict__ w,
    const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y,
    int B,
    int S,
    int V) {
  __shared__ fz_welford<float> smem_var[4];
  for (int row_base = (int)blockIdx.x; row_base < B * S; row_base += (int)gridDim.x) {
    const int row = row_base;
    const bool active = true;
    float table_r[6];
    float pos_r[6];
    float w_r[6];
    float b_r[6];
    fz_welford<float> acc_var = fz_welford_init<float>();
    if (active) {
      const int ids_v = ids[row];
      const long long ids_i64 = (long long)ids_v;
      const int ix = fz_clamp_index(ids_i64, V);
      #pragma unroll
      for (int j = 0; j < 6; ++j) {
        const int k = j * 128 + (int)threadIdx.x;
        const float table_v = __bfloat162float(table[ix * 768 + k]);
        const float pos_v = __bfloat162float(pos[k + (row % S) * 768]);
        const float h = (table_v + pos_v);
        const float hf = h;
        const float w_v = __bfloat162float(w[k]);
        const float b_v = __bfloat162float(b[k]);
        table_r[j] = table_v;
        pos_r[j] = pos_v;
        w_r[j] = w_v;
        b_r[j] = b_v;
        acc_var = fz_welford_push(acc_var, hf);
      }
    }
    acc_var = fz_row_reduce<128>(acc_var, fz_welford_op(), smem_var);
    const float var = fz_welford_var(acc_var, 0.0f);
    const float mean = fz_welford_mean(acc_var);
    if (active) {
      const float ve = (var + 1e-05f);
      const float rstd = rsqrtf(ve);
      #pragma unroll
      for (int j = 0; j < 6; ++j) {
        const int k = j * 128 + (int)threadIdx.x;
        const float h_v = (table_r[j] + pos_r[j]);
        const float hf_v = h_v;
        const float hc = (hf_v - mean);
        const float hn = (hc * rstd);
        const float hw = (hn * w_r[j]);
        const float yf = (hw + b_r[j]);
        const float y_v = __bfloat162float(__float2bfloat16_rn(yf));
        y[k + row * 768] = __float2bfloat16_rn(y_v);
      }
    }
  }
}
