// member function of dynamic_full_i64_k1_combo for dynamic_full_i64_k1:
// fuserc: graph 'dynamic_full_i64', kernel dynamic_full_i64_k1 (pointwise)
// computes: r = reshape(y)
// domain [K * 2, 2], flat, vector 4, block 128, 32-bit indexing
static __device__ __forceinline__ void fz_member0(
    const float* __restrict__ n0_,
    float* __restrict__ n1_,
    int n2_,
    const unsigned int fz_block) {
  const int n3_ = (int)fz_block * 512 + (int)threadIdx.x * 4;
  if (n2_ * 4 <= n3_) return;
  if ((n3_ + 4 <= n2_ * 4) && fz_is_aligned<16>(n0_, n3_) && fz_is_aligned<16>(n1_, n3_)) {
    const fz_vec<float, 4> n4_ = *reinterpret_cast<const fz_vec<float, 4>*>(n0_ + n3_);
    fz_vec<float, 4> n5_;
    #pragma unroll
    for (int n6_ = 0; n6_ < 4; ++n6_) {
      const float n7_ = n4_.v[n6_];
      n5_.v[n6_] = n7_;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(n1_ + n3_) = n5_;
    return;
  }
  for (int n6_ = 0; n6_ < 4; ++n6_) {
    const int n8_ = n3_ + n6_;
    if (n8_ < n2_ * 4) {
      const float n7_ = n0_[n8_];
      n1_[n8_] = n7_;
    }
  }
}

// member function of dynamic_full_i64_k1_combo for dynamic_full_i64_k2:
// fuserc: graph 'dynamic_full_i64', kernel dynamic_full_i64_k2 (pointwise)
// computes: xk = mul(x, k)
// domain [4], flat, vector 4, block 128, 32-bit indexing
static __device__ __forceinline__ void fz_member1(
    const float* __restrict__ n0_,
    long long n1_,
    float* __restrict__ n2_,
    const unsigned int fz_block) {
  const int n3_ = (int)threadIdx.x * 4;
  if (4 <= n3_) return;
  if ((n3_ + 4 <= 4) && fz_is_aligned<16>(n0_, n3_) && fz_is_aligned<16>(n2_, n3_)) {
    const fz_vec<float, 4> n4_ = *reinterpret_cast<const fz_vec<float, 4>*>(n0_ + n3_);
    const float n5_ = (float)n1_;
    fz_vec<float, 4> n6_;
    #pragma unroll
    for (int n7_ = 0; n7_ < 4; ++n7_) {
      const float n8_ = n4_.v[n7_];
      const float n9_ = (n8_ * n5_);
      n6_.v[n7_] = n9_;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(n2_ + n3_) = n6_;
    return;
  }
  for (int n7_ = 0; n7_ < 4; ++n7_) {
    const int n10_ = n3_ + n7_;
    if (n10_ < 4) {
      const float n8_ = n0_[n10_];
      const float n5_ = (float)n1_;
      const float n9_ = (n8_ * n5_);
      n2_[n10_] = n9_;
    }
  }
}

// fuserc: combo kernel dynamic_full_i64_k1_combo, 2 pointwise kernels side by side: dynamic_full_i64_k1, dynamic_full_i64_k2
extern "C" __global__ void __launch_bounds__(128) dynamic_full_i64_k1_combo(
    const float* y,
    float* r,
    int K,
    const float* x,
    long long k,
    float* xk,
    long long fz_start1) {
  if ((long long)blockIdx.x < fz_start1) {
    // dynamic_full_i64_k1
    fz_member0(y, r, K, (long long)blockIdx.x);
    return;
  }
  // dynamic_full_i64_k2
  fz_member1(x, k, xk, (long long)blockIdx.x - fz_start1);
}
