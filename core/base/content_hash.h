// Owns the content hash fuserc uses wherever bytes must be recognised again: package section
// hashes (corruption detection on load), compile and emulator caches. XXH3 (xxHash 0.8, from
// Debian's libxxhash-dev, inlined): 128 bits for names and cache keys, 64 bits for checks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fuserc {

uint64_t content_hash64(const void* data, size_t size);
inline uint64_t content_hash64(std::string_view s) {
  return content_hash64(s.data(), s.size());
}

// 32 lowercase hex digits of the 128-bit hash.
std::string content_hash_hex(std::string_view s);

}  // namespace fuserc
