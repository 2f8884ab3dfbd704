#include "serde/reader/package_layout.h"

#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace fuserc {

uint64_t package_head_hash(const uint8_t* data, size_t size, size_t blob_offset, size_t blob_size,
                           size_t zero_padding) {
  static const uint8_t kZeros[4096] = {};
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, data, blob_offset);
  size_t end = blob_offset + blob_size;
  XXH3_64bits_update(&state, data + end, size - end);
  while (zero_padding > 0) {
    size_t n = zero_padding < sizeof kZeros ? zero_padding : sizeof kZeros;
    XXH3_64bits_update(&state, kZeros, n);
    zero_padding -= n;
  }
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
bool has_magic(const uint8_t* end, const char (&magic)[8]) {
  return std::memcmp(end - 8, magic, 8) == 0;
}
}  // namespace

void encode_trailer(const PackageTrailer& t, uint8_t out[kPackageTrailerSize]) {
  put64(out, t.head_hash);
  put64(out + 8, t.blob_offset);
  put64(out + 16, t.blob_size);
  put64(out + 24, t.external_offset);
  put64(out + 32, t.external_size);
  std::memcpy(out + 40, kPackageTrailerMagic, 8);
}

bool decode_trailer(const uint8_t in[kPackageTrailerSize], PackageTrailer& t) {
  if (!has_magic(in + kPackageTrailerSize, kPackageTrailerMagic)) return false;
  t.head_hash = get64(in);
  t.blob_offset = get64(in + 8);
  t.blob_size = get64(in + 16);
  t.external_offset = get64(in + 24);
  t.external_size = get64(in + 32);
  t.trailer_size = kPackageTrailerSize;
  return true;
}

TrailerRead read_trailer(const uint8_t* end, size_t available, uint64_t file_size,
                         PackageTrailer& t) {
  if (available < 8) return TrailerRead::Missing;
  if (has_magic(end, kPackageTrailerMagic)) {
    if (available < kPackageTrailerSize) return TrailerRead::Missing;
    decode_trailer(end - kPackageTrailerSize, t);
    return TrailerRead::Ok;
  }
  if (has_magic(end, kPackageTrailerMagicV1)) {
    if (available < kPackageTrailerSizeV1) return TrailerRead::Missing;
    const uint8_t* in = end - kPackageTrailerSizeV1;
    t.head_hash = get64(in);
    t.blob_offset = get64(in + 8);
    t.blob_size = get64(in + 16);
    t.external_offset = file_size - kPackageTrailerSizeV1;
    t.external_size = 0;
    t.trailer_size = kPackageTrailerSizeV1;
    return TrailerRead::Ok;
  }
  if (std::memcmp(end - 8, kPackageTrailerMagic, 7) == 0 && end[-1] >= '0' && end[-1] <= '9')
    return TrailerRead::Newer;
  return TrailerRead::Missing;
}

uint64_t package_head_end(const PackageTrailer& t, uint64_t file_size) {
  if (file_size < t.trailer_size) return 0;
  const uint64_t trailer_start = file_size - t.trailer_size;
  if (t.external_offset > trailer_start || t.external_size != trailer_start - t.external_offset)
    return 0;
  if (t.external_size > 0 && t.external_offset % kExternalSectionAlignment != 0) return 0;
  const uint64_t head_end = t.external_offset;
  if (t.blob_offset > head_end || t.blob_size > head_end - t.blob_offset) return 0;
  return head_end;
}

std::vector<uint64_t> layout_external(const std::vector<uint64_t>& sizes, uint64_t* section_size) {
  std::vector<uint64_t> offsets;
  offsets.reserve(sizes.size());
  uint64_t end = 0;
  for (uint64_t size : sizes) {
    if (size == 0) {
      offsets.push_back(0);  // holds no byte: adds no padding either
      continue;
    }
    uint64_t offset = (end + kExternalAlignment - 1) / kExternalAlignment * kExternalAlignment;
    offsets.push_back(offset);
    end = offset + size;
  }
  *section_size = end;
  return offsets;
}

uint64_t external_section_offset(uint64_t flatbuffer_size, uint64_t section_size) {
  if (section_size == 0) return flatbuffer_size;
  return (flatbuffer_size + kExternalSectionAlignment - 1) / kExternalSectionAlignment *
         kExternalSectionAlignment;
}

}  // namespace fuserc
