// Owns running a whole package on a Device: bind the input shapes, allocate the buffers (an
// input with declared strides is laid out in that layout; an output written in place shares
// its input's buffer; intermediates share one workspace), launch the plan's kernels in order
// (the variant each binding chose; an empty grid is skipped), and read the outputs back.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/base/safetensors.h"
#include "runtime/device.h"
#include "runtime/executable.h"

namespace fuserc {

// The outputs in the graph's order, each name once. `inputs_file` names the inputs in errors.
std::vector<std::pair<std::string, HostTensor>> run_package(Executable& exe, Device& device,
                                                            const TensorMap& inputs,
                                                            const std::string& inputs_file);

}  // namespace fuserc
