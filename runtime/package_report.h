// Owns describing a loaded package for people and scripts (`fuserc inspect`): kernels,
// schedulers, architectures, registers and spills, arguments, buffers, the run plan, and
// every size as a formula over the symbols; with a binding, their values too.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runtime/executable.h"

namespace fuserc {

// The JSON form. Keys: name, format_version, fuserc_version, nvrtc_version, archs, ptx_arch,
// size_bytes, symbols, inputs, outputs, buffers, workspace, plan, kernels (each: name,
// scheduler, params, comment, archs, registers, spill_bytes, shared_bytes, grid, block,
// dynamic_shared_bytes, args, guards, flags, compile_options, variant_note, launch_values),
// and with a binding `bound` (symbols, device {sm_count}, launches {kernel, reason, note,
// grid, block, dynamic_shared_bytes, values, global_bytes}, buffer_bytes, workspace_bytes, and
// the traffic: global_bytes, what the kernels read and write, each buffer once per kernel that
// touches it, min_global_bytes, the graph's inputs read once and outputs written once, and
// traffic_ratio, their quotient).
nlohmann::json package_json(const Executable& exe, const Binding* bound);

// The human-readable form.
std::string package_text(const Executable& exe, const Binding* bound);

}  // namespace fuserc
