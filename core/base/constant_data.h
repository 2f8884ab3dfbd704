// Owns the values of a constant tensor (an input of a graph that carries `data`): its bytes in
// its dtype, row-major, either held in memory (values written inline in the graph) or mapped
// from a file (a tensor of a safetensors file beside the graph: weights of gigabytes are never
// copied), and their content hash, computed once when first asked for.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace fuserc {

class MappedFile;

class ConstantData {
 public:
  static std::shared_ptr<const ConstantData> from_bytes(std::string bytes, std::string source);
  // [offset, offset + size) of a mapped file, kept alive as long as this is.
  static std::shared_ptr<const ConstantData> mapped(std::shared_ptr<const MappedFile> file,
                                                    uint64_t offset, uint64_t size,
                                                    std::string source);

  std::string_view bytes() const { return {data_, size_}; }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(data_); }
  uint64_t size() const { return size_; }
  uint64_t hash() const;  // XXH3-64 of the bytes (content_hash64)
  // Where the values come from, for messages and `inspect`: "inline" or "FILE:TENSOR".
  const std::string& source() const { return source_; }
  // The file the values are read from (the weights file), or "" for inline values.
  const std::string& file() const { return file_; }

 private:
  ConstantData() = default;
  std::string owned_;
  std::shared_ptr<const MappedFile> mapped_;
  const char* data_ = nullptr;
  uint64_t size_ = 0;
  std::string source_, file_;
  mutable std::once_flag hashed_;
  mutable uint64_t hash_ = 0;
};

}  // namespace fuserc
