// member function of shapes_exprs_k0_combo for shapes_exprs_k0:
// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k0 (pointwise)
// computes: x3 = reshape(x); xs = slice(x3)
// domain [B, 2, 8], vectors within rows, vector 4, block 128, 32-bit indexing
static __device__ __forceinline__ void fz_member0(
    const float* __restrict__ n0_,
    float* __restrict__ n1_,
    int n2_,
    const unsigned int fz_block) {
  const int n3_ = (int)fz_block * 512 + (int)threadIdx.x * 4;
  if (n2_ * 16 <= n3_) return;
  const int n4_ = n3_ % 8;
  const int n5_ = n3_ / 8;
  if (fz_is_aligned<16>(n0_, n4_ + (n5_ / 2) * 48 + (n5_ % 2) * 16 + 8) && fz_is_aligned<16>(n1_, n4_ + n5_ * 8)) {
    const fz_vec<float, 4> n6_ = *reinterpret_cast<const fz_vec<float, 4>*>(n0_ + (n4_ + (n5_ / 2) * 48 + (n5_ % 2) * 16 + 8));
    fz_vec<float, 4> n7_;
    #pragma unroll
    for (int n8_ = 0; n8_ < 4; ++n8_) {
      const float n9_ = n6_.v[n8_];
      n7_.v[n8_] = n9_;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(n1_ + (n4_ + n5_ * 8)) = n7_;
    return;
  }
  for (int n8_ = 0; n8_ < 4; ++n8_) {
    const int n10_ = n3_ + n8_;
    if (n10_ < n2_ * 16) {
      const float n9_ = n0_[(n10_ / 16) * 48 + n10_ % 8 + (n10_ / 8 % 2) * 16 + 8];
      n1_[n10_] = n9_;
    }
  }
}

// member function of shapes_exprs_k0_combo for shapes_exprs_k1:
// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k1 (pointwise)
// computes: pp = pad(p)
// domain [T + T / 2 + 2, T % 3 + 4], flat, vector 4, block 128, 32-bit indexing
static __device__ __forceinline__ void fz_member1(
    const float* __restrict__ n0_,
    float* __restrict__ n1_,
    int n2_,
    const unsigned int fz_block) {
  const int n3_ = (int)fz_block * 512 + (int)threadIdx.x * 4;
  if (n2_ * 4 + (n2_ / 2) * 4 + (n2_ % 3) * 2 + n2_ * (n2_ % 3) + (n2_ / 2) * (n2_ % 3) + 8 <= n3_) return;
  if ((n3_ + 4 <= n2_ * 4 + (n2_ / 2) * 4 + (n2_ % 3) * 2 + n2_ * (n2_ % 3) + (n2_ / 2) * (n2_ % 3) + 8) && fz_is_aligned<16>(n1_, n3_)) {
    fz_vec<float, 4> n4_;
    #pragma unroll
    for (int n5_ = 0; n5_ < 4; ++n5_) {
      float n6_;
      if ((0 <= -(n2_ / 2) + (n3_ + n5_) / (n2_ % 3 + 4)) && (-(n2_ / 2) + (n3_ + n5_) / (n2_ % 3 + 4) < n2_ + 1) && ((n3_ + n5_) % (n2_ % 3 + 4) < 4)) {
        const float n7_ = n0_[-(n2_ / 2) * 4 + ((n3_ + n5_) / (n2_ % 3 + 4)) * 4 + (n3_ + n5_) % (n2_ % 3 + 4)];
        n6_ = n7_;
      } else {
        n6_ = 2.0f;
      }
      n4_.v[n5_] = n6_;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(n1_ + n3_) = n4_;
    return;
  }
  for (int n5_ = 0; n5_ < 4; ++n5_) {
    const int n8_ = n3_ + n5_;
    if (n8_ < n2_ * 4 + (n2_ / 2) * 4 + (n2_ % 3) * 2 + n2_ * (n2_ % 3) + (n2_ / 2) * (n2_ % 3) + 8) {
      float n6_;
      if ((0 <= -(n2_ / 2) + n8_ / (n2_ % 3 + 4)) && (-(n2_ / 2) + n8_ / (n2_ % 3 + 4) < n2_ + 1) && (n8_ % (n2_ % 3 + 4) < 4)) {
        const float n7_ = n0_[-(n2_ / 2) * 4 + (n8_ / (n2_ % 3 + 4)) * 4 + n8_ % (n2_ % 3 + 4)];
        n6_ = n7_;
      } else {
        n6_ = 2.0f;
      }
      n1_[n8_] = n6_;
    }
  }
}

// member function of shapes_exprs_k0_combo for shapes_exprs_k2:
// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k2 (pointwise)
// computes: io = iota(); ios = mul(io, size(B * T - 1))
// domain [T * 2 + 1], flat, vector 4, block 128, 32-bit indexing
static __device__ __forceinline__ void fz_member2(
    float* __restrict__ n0_,
    float* __restrict__ n1_,
    int n2_,
    long long n3_,
    const unsigned int fz_block) {
  const int n4_ = (int)threadIdx.x * 4;
  if (n2_ * 2 + 1 <= n4_) return;
  if ((n4_ + 4 <= n2_ * 2 + 1) && fz_is_aligned<16>(n0_, n4_) && fz_is_aligned<16>(n1_, n4_)) {
    fz_vec<float, 4> n5_;
    fz_vec<float, 4> n6_;
    #pragma unroll
    for (int n7_ = 0; n7_ < 4; ++n7_) {
      const float n8_ = (float)fz_iota(0.0, 1.0, n4_ + n7_);
      const float n9_ = (n8_ * (float)n3_);
      n5_.v[n7_] = n8_;
      n6_.v[n7_] = n9_;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(n0_ + n4_) = n5_;
    *reinterpret_cast<fz_vec<float, 4>*>(n1_ + n4_) = n6_;
    return;
  }
  for (int n7_ = 0; n7_ < 4; ++n7_) {
    const int n10_ = n4_ + n7_;
    if (n10_ < n2_ * 2 + 1) {
      const float n8_ = (float)fz_iota(0.0, 1.0, n10_);
      const float n9_ = (n8_ * (float)n3_);
      n0_[n10_] = n8_;
      n1_[n10_] = n9_;
    }
  }
}

// member function of shapes_exprs_k0_combo for shapes_exprs_k3:
// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k3 (pointwise)
// computes: fu = full()
// domain [B, T], flat, vector 4, block 128, 32-bit indexing
static __device__ __forceinline__ void fz_member3(
    int* __restrict__ n0_,
    int n1_,
    int n2_,
    long long n3_,
    const unsigned int fz_block) {
  const int n4_ = (int)fz_block * 512 + (int)threadIdx.x * 4;
  if (n1_ * n2_ <= n4_) return;
  if ((n4_ + 4 <= n1_ * n2_) && fz_is_aligned<16>(n0_, n4_)) {
    fz_vec<int, 4> n5_;
    #pragma unroll
    for (int n6_ = 0; n6_ < 4; ++n6_) {
      n5_.v[n6_] = (int)n3_;
    }
    *reinterpret_cast<fz_vec<int, 4>*>(n0_ + n4_) = n5_;
    return;
  }
  for (int n6_ = 0; n6_ < 4; ++n6_) {
    const int n7_ = n4_ + n6_;
    if (n7_ < n1_ * n2_) {
      n0_[n7_] = (int)n3_;
    }
  }
}

// member function of shapes_exprs_k0_combo for shapes_exprs_k4:
// fuserc: graph 'shapes_exprs', kernel shapes_exprs_k4 (pointwise)
// computes: q2 = reshape(q); qe = expand(q2)
// domain [B, T + 1, 2], vectors within rows, vector 2, block 128, 32-bit indexing
static __device__ __forceinline__ void fz_member4(
    const __nv_bfloat16* __restrict__ n0_,
    __nv_bfloat16* __restrict__ n1_,
    int n2_,
    int n3_,
    const unsigned int fz_block) {
  const int n4_ = (int)fz_block * 256 + (int)threadIdx.x * 2;
  if (n2_ * 2 + n2_ * n3_ * 2 <= n4_) return;
  const int n5_ = n4_ % 2;
  const int n6_ = n4_ / 2;
  if (fz_is_aligned<4>(n0_, n5_ + (n6_ % (n3_ + 1)) * 2) && fz_is_aligned<4>(n1_, n5_ + n6_ * 2)) {
    const fz_vec<__nv_bfloat16, 2> n7_ = *reinterpret_cast<const fz_vec<__nv_bfloat16, 2>*>(n0_ + (n5_ + (n6_ % (n3_ + 1)) * 2));
    fz_vec<__nv_bfloat16, 2> n8_;
    #pragma unroll
    for (int n9_ = 0; n9_ < 2; ++n9_) {
      const float n10_ = __bfloat162float(n7_.v[n9_]);
      n8_.v[n9_] = __float2bfloat16_rn(n10_);
    }
    *reinterpret_cast<fz_vec<__nv_bfloat16, 2>*>(n1_ + (n5_ + n6_ * 2)) = n8_;
    return;
  }
  for (int n9_ = 0; n9_ < 2; ++n9_) {
    const int n11_ = n4_ + n9_;
    if (n11_ < n2_ * 2 + n2_ * n3_ * 2) {
      const float n10_ = __bfloat162float(n0_[n11_ % 2 + (n11_ / 2 % (n3_ + 1)) * 2]);
      n1_[n11_] = __float2bfloat16_rn(n10_);
    }
  }
}

// fuserc: combo kernel shapes_exprs_k0_combo, 5 pointwise kernels side by side: shapes_exprs_k0, shapes_exprs_k1, shapes_exprs_k2, shapes_exprs_k3, shapes_exprs_k4
extern "C" __global__ void __launch_bounds__(128) shapes_exprs_k0_combo(
    const float* x,
    float* xs,
    int B,
    const float* p,
    float* pp,
    int T,
    long long fz_start1,
    float* io,
    float* ios,
    long long fz_size0,
    long long fz_start2,
    int* fu,
    long long fz_size1,
    long long fz_start3,
    const __nv_bfloat16* q,
    __nv_bfloat16* qe,
    long long fz_start4) {
  if ((long long)blockIdx.x < fz_start1) {
    // shapes_exprs_k0
    fz_member0(x, xs, B, (long long)blockIdx.x);
    return;
  }
  if ((long long)blockIdx.x < fz_start2) {
    // shapes_exprs_k1
    fz_member1(p, pp, T, (long long)blockIdx.x - fz_start1);
    return;
  }
  if ((long long)blockIdx.x < fz_start3) {
    // shapes_exprs_k2
    fz_member2(io, ios, T, fz_size0, (long long)blockIdx.x - fz_start2);
    return;
  }
  if ((long long)blockIdx.x < fz_start4) {
    // shapes_exprs_k3
    fz_member3(fu, B, T, fz_size1, (long long)blockIdx.x - fz_start3);
    return;
  }
  // shapes_exprs_k4
  fz_member4(q, qe, B, T, (long long)blockIdx.x - fz_start4);
}
