// Owns the byte layout around the FlatBuffer of a package, shared by writer and reader:
//   [FlatBuffer "FZPK" (Package)]
//   [zero padding to a multiple of 4096, only when there is external data]
//   [external data section: pieces at multiples of 256, zero padding between them]
//   [trailer, 48 bytes, little endian: head hash, blob offset, blob size, external offset,
//    external size, "FZPKEND2"]
// Packages of format versions 1 and 2 end with the 32-byte trailer "FZPKEND1" (head hash, blob
// offset, blob size) and have no external data; readers still accept it.
// The blobs (Package.blob_data's contents: cubins, PTX, sources, small constants) are one
// contiguous range of the FlatBuffer; the external section holds large constants outside the
// FlatBuffer (which stops at 2 GB), aligned so that a loader can map them. The head is every
// byte before the external section (or the trailer) outside the blob range: the head hash is
// XXH3-64 of it. In format 3 the blobs end the FlatBuffer and everything from their end to the
// external section (or the trailer) is zero padding: it is hashed as zeros, so a loader reads
// only [0, blob offset) (one read, whatever the package holds) and verify_all checks those
// bytes are zero. Each blob and each external piece carries its own hash (BlobRef.hash), and
// the padding between external pieces must be zero. So every byte of a package is covered by
// a check: the head on every load, a blob, a piece or padding before its first use or by
// verify_all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fuserc {

inline constexpr uint32_t kPackageFormatVersion = 4;
inline constexpr char kPackageIdentifier[] = "FZPK";
// The current trailer (FZPKEND2) and the one of format versions 1 and 2 (FZPKEND1).
inline constexpr char kPackageTrailerMagic[8] = {'F', 'Z', 'P', 'K', 'E', 'N', 'D', '2'};
inline constexpr char kPackageTrailerMagicV1[8] = {'F', 'Z', 'P', 'K', 'E', 'N', 'D', '1'};
inline constexpr size_t kPackageTrailerSize = 48;
inline constexpr size_t kPackageTrailerSizeV1 = 32;
// The external section starts at a multiple of kExternalSectionAlignment from the start of the
// file, each piece at a multiple of kExternalAlignment from the start of the section.
inline constexpr uint64_t kExternalSectionAlignment = 4096;
inline constexpr uint64_t kExternalAlignment = 256;

struct PackageTrailer {
  uint64_t head_hash = 0;
  uint64_t blob_offset = 0;
  uint64_t blob_size = 0;
  // Where the external section starts in the file and its size. With no external data, the
  // offset is where the trailer starts (the FlatBuffer's end) and the size 0.
  uint64_t external_offset = 0;
  uint64_t external_size = 0;
  size_t trailer_size = kPackageTrailerSize;  // kPackageTrailerSizeV1 for an FZPKEND1 trailer
};

// Writes a FZPKEND2 trailer.
void encode_trailer(const PackageTrailer& t, uint8_t out[kPackageTrailerSize]);
// Reads a FZPKEND2 trailer; false when its magic is missing.
bool decode_trailer(const uint8_t in[kPackageTrailerSize], PackageTrailer& t);

enum class TrailerRead { Ok, Missing, Newer };
// Reads the trailer that ends at `end` (one past the file's last byte), FZPKEND2 or FZPKEND1,
// given that the `available` bytes before `end` are readable. Missing: no trailer magic (or
// too few bytes); Newer: "FZPKEND" followed by another digit, a layout from a newer fuserc.
// An FZPKEND1 trailer reads as one with no external data ending the FlatBuffer.
TrailerRead read_trailer(const uint8_t* end, size_t available, uint64_t file_size,
                         PackageTrailer& t);

// Where the head ends (the FlatBuffer and the padding after it) in a file of `file_size` bytes
// with trailer `t`, or 0 when the trailer's offsets and sizes do not fit that file: the
// external section must start at a multiple of kExternalSectionAlignment and end at the
// trailer, the blob range must lie inside the head.
uint64_t package_head_end(const PackageTrailer& t, uint64_t file_size);

// Each external piece's offset from the start of the external section, for pieces of `sizes`
// bytes placed in order at multiples of kExternalAlignment (an empty piece at 0);
// `section_size` gets the section's size (the last piece's end, 0 with no bytes).
std::vector<uint64_t> layout_external(const std::vector<uint64_t>& sizes, uint64_t* section_size);

// Where the external section of `section_size` bytes starts after a FlatBuffer of
// `flatbuffer_size` bytes: the next multiple of kExternalSectionAlignment, or the FlatBuffer's
// end when the section is empty.
uint64_t external_section_offset(uint64_t flatbuffer_size, uint64_t section_size);

// XXH3-64 of [data, data + size) without the blob range [blob_offset, blob_offset + blob_size),
// followed by `zero_padding` zero bytes (the padding before the external section, which the
// writer does not hold in memory).
uint64_t package_head_hash(const uint8_t* data, size_t size, size_t blob_offset, size_t blob_size,
                           size_t zero_padding = 0);

}  // namespace fuserc
