#include "core/base/content_hash.h"

#include <cstdio>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace fuserc {

uint64_t content_hash64(const void* data, size_t size) {
  return XXH3_64bits(data, size);
}

std::string content_hash_hex(std::string_view s) {
  XXH128_hash_t h = XXH3_128bits(s.data(), s.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

}  // namespace fuserc
