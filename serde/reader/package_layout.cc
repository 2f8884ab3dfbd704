#include "serde/reader/package_layout.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace fuserc {

uint64_t package_head_hash(const uint8_t* data, size_t size, size_t blob_offset, size_t blob_size) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, data, blob_offset);
  size_t end = blob_offset + blob_size;
  XXH3_64bits_update(&state, data + end, size - end);
  return XXH3_64bits_digest(&state);
}

namespace {
void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
}  // namespace

void encode_trailer(const PackageTrailer& t, uint8_t out[kPackageTrailerSize]) {
  put64(out, t.head_hash);
  put64(out + 8, t.blob_offset);
  put64(out + 16, t.blob_size);
  for (int i = 0; i < 8; ++i) out[24 + i] = static_cast<uint8_t>(kPackageTrailerMagic[i]);
}

bool decode_trailer(const uint8_t in[kPackageTrailerSize], PackageTrailer& t) {
  for (int i = 0; i < 8; ++i)
    if (in[24 + i] != static_cast<uint8_t>(kPackageTrailerMagic[i])) return false;
  t.head_hash = get64(in);
  t.blob_offset = get64(in + 8);
  t.blob_size = get64(in + 16);
  return true;
}

}  // namespace fuserc
