// Owns the byte layout around the FlatBuffer of a package, shared by writer and reader:
//   [FlatBuffer "FZPK" (Package)] [8 bytes: head hash, little endian] [8 bytes: "FZPKEND1"]
// The head hash is XXH3-64 of every FlatBuffer byte except the contents of
// Package.blob_data; each blob carries its own hash (BlobRef.hash). So every byte of a
// package is covered by a hash: the head is checked on every load, a blob before its first use.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fuserc {

inline constexpr uint32_t kPackageFormatVersion = 1;
inline constexpr char kPackageIdentifier[] = "FZPK";
inline constexpr char kPackageTrailerMagic[8] = {'F', 'Z', 'P', 'K', 'E', 'N', 'D', '1'};
inline constexpr size_t kPackageTrailerSize = 16;

// XXH3-64 of [data, data + size) without the blob range [blob_offset, blob_offset + blob_size).
uint64_t package_head_hash(const uint8_t* data, size_t size, size_t blob_offset, size_t blob_size);

}  // namespace fuserc
