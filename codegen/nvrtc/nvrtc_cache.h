// Owns what the compile cache stores for one NVRTC compilation (one kernel for one
// architecture): the key, every input the result depends on hashed together (the CUDA source,
// its file name, the NVRTC options, the include folder, the NVRTC version and library, the
// fuserc version and this format's version), and the value: the cubin, ptxas' resource report
// as numbers, and the PTX when it was asked for. A cached result gives the same package bytes
// as a fresh compilation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_summary.h"

namespace fuserc {

struct NvrtcOutput {
  ArchBinary binary;
  bool has_ptx = false;
  std::string ptx;
};

// `options` are exactly the options passed to NVRTC (include folder and architecture too).
std::string nvrtc_cache_key(const std::string& source, const std::string& file_name,
                            const std::vector<std::string>& options,
                            const std::string& nvrtc_version, const std::string& nvrtc_identity);

std::string encode_nvrtc_result(const NvrtcOutput& r);
// Nothing when `bytes` is not a well-formed value (the cache checked its hash already; this
// guards against a value written by an incompatible fuserc with the same key).
std::optional<NvrtcOutput> decode_nvrtc_result(const std::string& bytes);

}  // namespace fuserc
