// member function of indexing_dtype_f32_k0_combo for indexing_dtype_f32_k0:
// fuserc: graph 'indexing_dtype_f32', kernel indexing_dtype_f32_k0 (pointwise)
// computes: sel = index_select(x, rows)
// domain [M, 12], flat, vector 4, block 128, 32-bit indexing
static __device__ __forceinline__ void fz_member0(
    const float* __restrict__ n0_,
    const int* __restrict__ n1_,
    float* __restrict__ n2_,
    int n3_,
    int n4_,
    const unsigned int fz_block) {
  const int n5_ = (int)fz_block * 512 + (int)threadIdx.x * 4;
  if (n3_ * 12 <= n5_) return;
  if ((n5_ + 4 <= n3_ * 12) && fz_is_aligned<16>(n2_, n5_)) {
    fz_vec<float, 4> n6_;
    #pragma unroll
    for (int n7_ = 0; n7_ < 4; ++n7_) {
      const int n8_ = n1_[(n5_ + n7_) / 12];
      const long long n9_ = (long long)n8_;
      const int n10_ = fz_clamp_index(n9_, n4_);
      const float n11_ = n0_[n10_ * 12 + (n5_ + n7_) % 12];
      n6_.v[n7_] = n11_;
    }
    *reinterpret_cast<fz_vec<float, 4>*>(n2_ + n5_) = n6_;
    return;
  }
  for (int n7_ = 0; n7_ < 4; ++n7_) {
    const int n12_ = n5_ + n7_;
    if (n12_ < n3_ * 12) {
      const int n8_ = n1_[n12_ / 12];
      const long long n9_ = (long long)n8_;
      const int n10_ = fz_clamp_index(n9_, n4_);
      const float n11_ = n0_[n10_ * 12 + n12_ % 12];
      n2_[n12_] = n11_;
    }
  }
}

// member function of indexing_dtype_f32_k0_combo for indexing_dtype_f32_k1:
// fuserc: graph 'indexing_dtype_f32', kernel indexing_dtype_f32_k1 (pointwise)
// computes: gat = gather(x, cols); after = mul(gat, y)
// domain [N, K], flat, vector 2, block 128, 32-bit indexing
static __device__ __forceinline__ void fz_member1(
    const float* __restrict__ n0_,
    const long long* __restrict__ n1_,
    const float* __restrict__ n2_,
    float* __restrict__ n3_,
    float* __restrict__ n4_,
    int n5_,
    int n6_,
    const unsigned int fz_block) {
  const int n7_ = (int)fz_block * 256 + (int)threadIdx.x * 2;
  if (n5_ * n6_ <= n7_) return;
  if ((n7_ + 2 <= n5_ * n6_) && fz_is_aligned<16>(n1_, n7_) && fz_is_aligned<8>(n2_, n7_) && fz_is_aligned<8>(n3_, n7_) && fz_is_aligned<8>(n4_, n7_)) {
    const fz_vec<long long, 2> n8_ = *reinterpret_cast<const fz_vec<long long, 2>*>(n1_ + n7_);
    const fz_vec<float, 2> n9_ = *reinterpret_cast<const fz_vec<float, 2>*>(n2_ + n7_);
    fz_vec<float, 2> n10_;
    fz_vec<float, 2> n11_;
    #pragma unroll
    for (int n12_ = 0; n12_ < 2; ++n12_) {
      const long long n13_ = n8_.v[n12_];
      const int n14_ = fz_clamp_index(n13_, 12);
      const float n15_ = n0_[n14_ + ((n7_ + n12_) / n5_) * 12];
      const float n16_ = n9_.v[n12_];
      const float n17_ = (n15_ * n16_);
      n10_.v[n12_] = n15_;
      n11_.v[n12_] = n17_;
    }
    *reinterpret_cast<fz_vec<float, 2>*>(n3_ + n7_) = n10_;
    *reinterpret_cast<fz_vec<float, 2>*>(n4_ + n7_) = n11_;
    return;
  }
  for (int n12_ = 0; n12_ < 2; ++n12_) {
    const int n18_ = n7_ + n12_;
    if (n18_ < n5_ * n6_) {
      const long long n13_ = n1_[n18_];
      const int n14_ = fz_clamp_index(n13_, 12);
      const float n15_ = n0_[n14_ + (n18_ / n5_) * 12];
      const float n16_ = n2_[n18_];
      const float n17_ = (n15_ * n16_);
      n3_[n18_] = n15_;
      n4_[n18_] = n17_;
    }
  }
}

// fuserc: combo kernel indexing_dtype_f32_k0_combo, 2 pointwise kernels side by side: indexing_dtype_f32_k0, indexing_dtype_f32_k1
extern "C" __global__ void __launch_bounds__(128) indexing_dtype_f32_k0_combo(
    const float* x,
    const int* rows,
    float* sel,
    int M,
    int N,
    const long long* cols,
    const float* y,
    float* gat,
    float* after,
    int K,
    long long fz_start1) {
  if ((long long)blockIdx.x < fz_start1) {
    // indexing_dtype_f32_k0
    fz_member0(x, rows, sel, M, N, (long long)blockIdx.x);
    return;
  }
  // indexing_dtype_f32_k1
  fz_member1(x, cols, y, gat, after, K, N, (long long)blockIdx.x - fz_start1);
}
