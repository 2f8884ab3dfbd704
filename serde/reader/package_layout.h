// Owns the byte layout around the FlatBuffer of a package, shared by writer and reader:
//   [FlatBuffer "FZPK" (Package)]
//   [trailer, 32 bytes, little endian: head hash, blob offset, blob size, "FZPKEND1"]
// The blobs (Package.blob_data's contents: cubins, PTX, sources) are one contiguous range of
// the FlatBuffer; the trailer says where, so that a loader reads only the rest (the head) up
// front and each blob when first used. The head hash is XXH3-64 of every FlatBuffer byte
// outside the blob range; each blob carries its own hash (BlobRef.hash). So every byte of a
// package is covered by a hash: the head is checked on every load, a blob before its first use.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fuserc {

inline constexpr uint32_t kPackageFormatVersion = 2;
inline constexpr char kPackageIdentifier[] = "FZPK";
inline constexpr char kPackageTrailerMagic[8] = {'F', 'Z', 'P', 'K', 'E', 'N', 'D', '1'};
inline constexpr size_t kPackageTrailerSize = 32;

struct PackageTrailer {
  uint64_t head_hash = 0;
  uint64_t blob_offset = 0;
  uint64_t blob_size = 0;
};

void encode_trailer(const PackageTrailer& t, uint8_t out[kPackageTrailerSize]);
// False when the magic is missing.
bool decode_trailer(const uint8_t in[kPackageTrailerSize], PackageTrailer& t);

// XXH3-64 of [data, data + size) without the blob range [blob_offset, blob_offset + blob_size).
uint64_t package_head_hash(const uint8_t* data, size_t size, size_t blob_offset, size_t blob_size);

}  // namespace fuserc
