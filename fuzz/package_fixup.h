// Owns making a mutated package pass its head checksum, so that the fuzzer's changes to the
// structure reach the FlatBuffers verifier, the consistency checks and binding instead of
// stopping at the checksum (which the unit tests already show refuses every flipped byte).
#pragma once

#include <cstdint>
#include <string>

#include "serde/reader/package_layout.h"

namespace fuserc_fuzz {

// Recomputes the trailer's head hash when the trailer is readable and its blob range lies in
// the file; otherwise leaves the bytes as they are.
inline void fix_head_hash(std::string& bytes) {
  using namespace fuserc;
  if (bytes.size() < kPackageTrailerSize) return;
  auto* data = reinterpret_cast<uint8_t*>(bytes.data());
  const size_t body = bytes.size() - kPackageTrailerSize;
  PackageTrailer t;
  if (!decode_trailer(data + body, t)) return;
  if (t.blob_offset > body || t.blob_size > body - t.blob_offset) return;
  t.head_hash = package_head_hash(data, body, t.blob_offset, t.blob_size);
  encode_trailer(t, data + body);
}

}  // namespace fuserc_fuzz
