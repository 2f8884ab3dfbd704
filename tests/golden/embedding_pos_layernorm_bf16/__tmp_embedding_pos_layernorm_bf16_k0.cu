// fuserc: graph 'embedding_pos_layernorm_bf16', kernel embedding_pos_layernorm_bf16_k0 (normalization)
// computes: flat = reshape(ids); rows = index_select(table, flat); emb = reshape(rows); p = slice(pos); h = add(emb, p); hf = cast(h); var, mean = var_mean(hf); ve = add(var, 1e-05); rstd = rsqrt(ve); hc = sub(hf, mean); hn = mul(hc, rstd); hw = mul(hn, w); yf = add(hw, b); y = cast(yf)
// reduces [B, S, 768] over rows of 768 (B * S rows), contiguous rows, 96 threads per row, 2 rows per block, row in registers (8 per thread), vectors of 8 when the row allows, 32-bit indexing
extern "C" __global__ void __launch_bounds__(192) embedding_pos_layernorm_bf16_k0(
    const int* __restrict__ ids,
    const __nv_bfloat16* __restrict__ table,
    const __nv_bfloat16* __restrict__ pos,
    const __nv_bfloat16* __restrict__ w,
    const __nv_bfloat16* __restrict__ b,
    __nv_bfloat16* __restrict__ y,
    int B,
    int S,
    int V) {
  __shared__ float smem_var[6];
  __shared__ float smem_m2_var[6];
  for (int row_base = (int)blockIdx.x * 2; row_base < B * S; row_base += (int)gridDim.x * 2) {
    const int row = row_base + (int)threadIdx.y;
    const bool active = row_base + (int)threadIdx.y < B * S;
    const bool vec_ok = fz_is_aligned<16>(table, 0) && fz_is_aligned<16>(pos, (row % S) * 768) && fz_is_aligned<16>(w, 0) && fz_is_aligned<16>(b, 0) && fz_is_aligned<16>(y, row * 768);
    float table_r[8];
    float pos_r[8];
    float w_r[8];
    float b_r[8];
    float acc_var = 0.0f;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          [[maybe_unused]] const int g_v = (int)threadIdx.x;
          const fz_vec<__nv_bfloat16, 8> pos_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(pos + (g_v * 8 + (row % S) * 768));
          const fz_vec<__nv_bfloat16, 8> w_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(w + g_v * 8);
          const fz_vec<__nv_bfloat16, 8> b_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(b + g_v * 8);
          const int ids_v2 = ids[row];
          const long long ids_i64_v = (long long)ids_v2;
          const int ix_v = fz_clamp_index(ids_i64_v, V);
          const fz_vec<__nv_bfloat16, 8> table_vec = *reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(table + (g_v * 8 + ix_v * 768));
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float table_v2 = __bfloat162float(table_vec.v[lane]);
            const float pos_v2 = __bfloat162float(pos_vec.v[lane]);
            const float h_v = (table_v2 + pos_v2);
            const float hf_v = h_v;
            const float w_v2 = __bfloat162float(w_vec.v[lane]);
            const float b_v2 = __bfloat162float(b_vec.v[lane]);
            table_r[lane] = table_v2;
            pos_r[lane] = pos_v2;
            w_r[lane] = w_v2;
            b_r[lane] = b_v2;
            acc_var = (acc_var + hf_v);
          }
        }
      } else {
        const int ids_v = ids[row];
        const long long ids_i64 = (long long)ids_v;
        const int ix = fz_clamp_index(ids_i64, V);
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int k = j * 96 + (int)threadIdx.x;
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
          acc_var = (acc_var + hf);
        }
      }
    }
    acc_var = fz_row_reduce<96>(acc_var, fz_sum_op(), smem_var);
    const float mean_of_var = (acc_var / (float)768);
    float m2_var = 0.0f;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          [[maybe_unused]] const int g_v = (int)threadIdx.x;
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float h_v3 = (table_r[lane] + pos_r[lane]);
            const float hf_v3 = h_v3;
            m2_var = (m2_var + ((hf_v3 - mean_of_var) * (hf_v3 - mean_of_var)));
          }
        }
      } else {
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float h_v2 = (table_r[j] + pos_r[j]);
          const float hf_v2 = h_v2;
          m2_var = (m2_var + ((hf_v2 - mean_of_var) * (hf_v2 - mean_of_var)));
        }
      }
    }
    m2_var = fz_row_reduce<96>(m2_var, fz_sum_op(), smem_m2_var);
    const float var = (m2_var / fz_maximum(((float)768 - 0.0f), 0.0f));
    const float mean = mean_of_var;
    if (active) {
      if (vec_ok) {
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          [[maybe_unused]] const int g_v = (int)threadIdx.x;
          const float ve_v = (var + 1e-05f);
          const float rstd_v = rsqrtf(ve_v);
          fz_vec<__nv_bfloat16, 8> y_vec;
          #pragma unroll
          for (int lane = 0; lane < 8; ++lane) {
            const float h_v5 = (table_r[lane] + pos_r[lane]);
            const float hf_v5 = h_v5;
            const float hc_v = (hf_v5 - mean);
            const float hn_v = (hc_v * rstd_v);
            const float hw_v = (hn_v * w_r[lane]);
            const float yf_v = (hw_v + b_r[lane]);
            const float y_v2 = __bfloat162float(__float2bfloat16_rn(yf_v));
            y_vec.v[lane] = __float2bfloat16_rn(y_v2);
          }
          *reinterpret_cast<fz_vec<__nv_bfloat16, 8>*>(y + (g_v * 8 + row * 768)) = y_vec;
        }
      } else {
        const float ve = (var + 1e-05f);
        const float rstd = rsqrtf(ve);
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int k = j * 96 + (int)threadIdx.x;
          const float h_v4 = (table_r[j] + pos_r[j]);
          const float hf_v4 = h_v4;
          const float hc = (hf_v4 - mean);
          const float hn = (hc * rstd);
          const float hw = (hn * w_r[j]);
          const float yf = (hw + b_r[j]);
          const float y_v = __bfloat162float(__float2bfloat16_rn(yf));
          y[k + row * 768] = __float2bfloat16_rn(y_v);
        }
      }
    }
  }
}
