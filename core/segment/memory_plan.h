// Owns where every value that crosses global memory lives: graph inputs and outputs are
// buffers the caller provides (an output written in place lives in its input's buffer),
// constants are the package's (uploaded once per device), and
// intermediates between kernels live in one workspace, each at an offset given as an
// expression over the symbols. Intermediates whose lifetimes (first write to last read, in
// kernel order) do not overlap share bytes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ir/segmented_fusion.h"

namespace fuserc {

struct BufferInfo {
  enum class Kind : uint8_t { Input, Output, Intermediate, Constant };
  Kind kind = Kind::Input;
  ValueId value = kNoValue;
  int io_index = -1;     // Input: its index among the inputs the caller passes (constants left
                         // out); Constant: among the constants; Output: first index into outputs
  int alias_input = -1;  // Output written in place: the input's index (as io_index counts)
  Expr bytes;            // size in bytes
  Expr offset;           // Intermediate: byte offset in the workspace
  int first_segment = -1, last_segment = -1;  // Intermediate: lifetime, in plan steps
};

struct MemoryPlan {
  std::vector<BufferInfo> buffers;
  std::map<ValueId, int> buffer_of;  // value -> index into buffers
  Expr workspace_bytes = Expr(0);

  std::string to_text(const Fusion& f) const;
};

inline constexpr int64_t kWorkspaceAlignment = 256;

MemoryPlan plan_memory(const Fusion& f, const SegmentedFusion& s);

}  // namespace fuserc
