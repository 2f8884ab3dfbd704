#include "serde/package_layout.h"

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

}  // namespace fuserc
