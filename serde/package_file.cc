#include "serde/package_file.h"

#include <cstdint>
#include <functional>

#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "serde/reader/package_layout.h"

namespace fuserc {
namespace {

// Gives the file's bytes in order to `write`, padding included.
void produce_package(std::string_view flatbuffer, size_t blob_offset, size_t blob_size,
                     const std::vector<std::string_view>& pieces, const WriteBytes& write) {
  FUSERC_CHECK(flatbuffer.size() >= 8 && blob_offset <= flatbuffer.size() &&
                   blob_size <= flatbuffer.size() - blob_offset,
               "package writer: the blob range lies outside the FlatBuffer");
  std::vector<uint64_t> sizes;
  sizes.reserve(pieces.size());
  for (std::string_view p : pieces) sizes.push_back(p.size());
  uint64_t section_size = 0;
  const std::vector<uint64_t> offsets = layout_external(sizes, &section_size);
  const uint64_t section_offset = external_section_offset(flatbuffer.size(), section_size);
  const uint64_t padding = section_offset - flatbuffer.size();

  static const char kZeros[kExternalSectionAlignment] = {};
  auto zeros = [&](uint64_t n) {
    while (n > 0) {
      uint64_t k = n < sizeof kZeros ? n : sizeof kZeros;
      write(std::string_view(kZeros, k));
      n -= k;
    }
  };
  // The blobs end the FlatBuffer (FlatBuffers builds back to front and they are built first):
  // from their end on, the head is zeros up to the external section, hashed as such.
  const size_t blob_end = blob_offset + blob_size;
  for (size_t i = blob_end; i < flatbuffer.size(); ++i)
    FUSERC_CHECK(flatbuffer[i] == 0, "package writer: bytes after the blobs are not zero");
  PackageTrailer t;
  t.head_hash = package_head_hash(reinterpret_cast<const uint8_t*>(flatbuffer.data()), blob_end,
                                  blob_offset, blob_size, flatbuffer.size() - blob_end + padding);
  t.blob_offset = blob_offset;
  t.blob_size = blob_size;
  t.external_offset = section_offset;
  t.external_size = section_size;
  uint8_t trailer[kPackageTrailerSize];
  encode_trailer(t, trailer);

  write(flatbuffer);
  zeros(padding);
  uint64_t at = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].empty()) continue;
    zeros(offsets[i] - at);
    write(pieces[i]);
    at = offsets[i] + pieces[i].size();
  }
  FUSERC_CHECK(at == section_size, "package writer: the external section's size");
  write(std::string_view(reinterpret_cast<const char*>(trailer), sizeof trailer));
}

}  // namespace

void write_package_file(const std::string& path, std::string_view flatbuffer, size_t blob_offset,
                        size_t blob_size, const std::vector<std::string_view>& external_pieces) {
  write_file_atomically_streamed(path, [&](const WriteBytes& write) {
    produce_package(flatbuffer, blob_offset, blob_size, external_pieces, write);
  });
}

void replace_package_file(const std::string& path, std::string_view flatbuffer,
                          size_t blob_offset, size_t blob_size,
                          const std::vector<std::string_view>& external_pieces) {
  write_file_replacing_streamed(path, [&](const WriteBytes& write) {
    produce_package(flatbuffer, blob_offset, blob_size, external_pieces, write);
  });
}

std::string assemble_package(std::string_view flatbuffer, size_t blob_offset, size_t blob_size,
                             const std::vector<std::string_view>& external_pieces) {
  std::string out;
  produce_package(flatbuffer, blob_offset, blob_size, external_pieces,
                  [&](std::string_view bytes) { out.append(bytes.data(), bytes.size()); });
  return out;
}

}  // namespace fuserc
