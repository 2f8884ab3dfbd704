// Host side of fuserc's random numbers: thin wrappers over philox_impl.h, the same code the
// generated kernels compile, so the CPU reference draws the GPU's bits.
#include "core/base/philox.h"

#include "core/base/philox_impl.h"

namespace fuserc {

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  fuserc_u32x4 c;
  for (int i = 0; i < 4; ++i) c.w[i] = counter[i];
  const fuserc_u32x4 r = fuserc_philox4x32_10(c, key[0], key[1]);
  return {r.w[0], r.w[1], r.w[2], r.w[3]};
}

float philox_uniform_f32(uint64_t seed, uint64_t offset, uint64_t index) {
  return fuserc_rand_f32(seed, offset, index);
}

double philox_uniform_f64(uint64_t seed, uint64_t offset, uint64_t index) {
  return fuserc_rand_f64(seed, offset, index);
}

float philox_normal_f32(uint64_t seed, uint64_t offset, uint64_t index) {
  return fuserc_randn_f32(seed, offset, index);
}

double philox_normal_f64(uint64_t seed, uint64_t offset, uint64_t index) {
  return fuserc_randn_f64(seed, offset, index);
}

}  // namespace fuserc
