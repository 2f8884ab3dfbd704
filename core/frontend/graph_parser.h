// Owns reading a fusion graph (FUSION_FORMAT.md) into a validated Fusion: every rule of the
// contract is checked here, and every violation is a UserError of one line naming the file,
// the line and column, the op (index and output name) and the JSON path.
#pragma once

#include <string>

#include "core/base/json_reader.h"
#include "core/ir/fusion.h"

namespace fuserc {

// The largest symbolic extent the format allows (extents are below 2^62).
inline constexpr int64_t kMaxExtent = (int64_t{1} << 62) - 1;

Fusion parse_fusion(const JsonDocument& doc);
Fusion parse_fusion_file(const std::string& path);

}  // namespace fuserc
