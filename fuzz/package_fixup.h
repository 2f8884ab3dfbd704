// Owns making a mutated package pass its head checksum, so that the fuzzer's changes to the
// structure reach the FlatBuffers verifier, the consistency checks and binding instead of
// stopping at the checksum (which the unit tests already show refuses every flipped byte).
#pragma once

#include <cstdint>
#include <string>

#include "serde/reader/package_layout.h"

namespace fuserc_fuzz {

// Recomputes the trailer's head hash (as the reader computes it: the head up to the external
// section, and in format 3 everything after the blobs taken as zeros) when the trailer is
// readable and its ranges lie in the file; otherwise leaves the bytes as they are.
inline void fix_head_hash(std::string& bytes) {
  using namespace fuserc;
  if (bytes.size() < kPackageTrailerSizeV1) return;
  auto* data = reinterpret_cast<uint8_t*>(bytes.data());
  PackageTrailer t;
  if (read_trailer(data + bytes.size(), bytes.size(), bytes.size(), t) != TrailerRead::Ok) return;
  const uint64_t head_end = package_head_end(t, bytes.size());
  if (head_end < 8) return;
  const size_t tail = static_cast<size_t>(t.blob_offset + t.blob_size);
  if (t.trailer_size == kPackageTrailerSizeV1) {
    t.head_hash = package_head_hash(data, head_end, t.blob_offset, t.blob_size);
    // (The old trailer's layout: head hash, blob offset, blob size, magic.)
    for (int i = 0; i < 8; ++i)
      data[bytes.size() - kPackageTrailerSizeV1 + i] = static_cast<uint8_t>(t.head_hash >> (8 * i));
    return;
  }
  t.head_hash = package_head_hash(data, tail, t.blob_offset, t.blob_size, head_end - tail);
  encode_trailer(t, data + bytes.size() - kPackageTrailerSize);
}

}  // namespace fuserc_fuzz
