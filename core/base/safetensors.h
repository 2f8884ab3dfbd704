// Owns reading and writing safetensors files (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
// then the raw little-endian data. All seven dtypes, rank 0 and empty tensors. Malformed or
// truncated files are refused with a one-line UserError naming the file and the problem.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/host_tensor.h"

namespace fuserc {

// Tensors by name. std::map keeps names sorted, so files written from it are deterministic.
using TensorMap = std::map<std::string, HostTensor>;

TensorMap read_safetensors(const std::string& path);

// One tensor of a safetensors file, located but not read.
struct SafetensorsEntry {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t offset = 0;  // of its bytes, from the start of the file
  uint64_t size = 0;    // bytes
};
// The header of a safetensors file (checked as read_safetensors checks it), without reading
// the data: for weights files of gigabytes. `file_size` is the file's size in bytes.
std::map<std::string, SafetensorsEntry> index_safetensors(std::string_view head,
                                                          uint64_t file_size,
                                                          const std::string& file_for_errors);
TensorMap parse_safetensors(const std::string& bytes, const std::string& file_for_errors);

// Writes atomically (a temporary file in the same folder, then rename): on any failure no
// file, and no partial file, is left at `path`. Tensors are written in the order given.
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, const HostTensor*>>& tensors);
std::string serialize_safetensors(
    const std::vector<std::pair<std::string, const HostTensor*>>& tensors);

}  // namespace fuserc
