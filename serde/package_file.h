// Owns putting a package file together from its parts (schemas/PACKAGE_FORMAT.md, "File
// layout"): the finished FlatBuffer, the zero padding up to the external section, the external
// pieces at their aligned offsets (layout_external), and the trailer with the head hash. The
// pieces are written as they are, never gathered into one string, so they may be gigabytes
// and may point into mapped files.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fuserc {

// Writes the package atomically (as write_file_atomically: on failure nothing is left at
// `path`). `blob_offset`, `blob_size`: where Package.blob_data's contents lie in `flatbuffer`.
// The external pieces go, in order, at the offsets layout_external gives for their sizes, which
// the FlatBuffer's BlobRefs must already name.
void write_package_file(const std::string& path, std::string_view flatbuffer, size_t blob_offset,
                        size_t blob_size, const std::vector<std::string_view>& external_pieces);
// The same without forcing it to disk (write_file_replacing's rule: after a crash the file is
// the old one, the new one, or damaged and refused by its checksums), for build outputs.
void replace_package_file(const std::string& path, std::string_view flatbuffer,
                          size_t blob_offset, size_t blob_size,
                          const std::vector<std::string_view>& external_pieces);

// The same bytes in memory (tests, small packages).
std::string assemble_package(std::string_view flatbuffer, size_t blob_offset, size_t blob_size,
                             const std::vector<std::string_view>& external_pieces);

}  // namespace fuserc
