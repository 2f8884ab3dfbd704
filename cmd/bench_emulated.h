// Owns `fuserc bench GRAPH --emulate-runs N`: the whole plan run by the emulator (the kernels
// compiled for the host and run on every core, the library steps in the CPU executor) at the
// symbols given (hints for the rest), on random inputs: the first run, which host-compiles the
// kernels the emulator's cache lacks, and the median of the others.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/ir/fusion.h"
#include "runtime/executable.h"

namespace fuserc::cmd {

// `graph` is the fusion `exe` was compiled from, as parsed (its inputs by name). One JSON
// object: runs, first_us, median_us, kernels and library_steps launched.
nlohmann::json bench_emulated_plan(Executable& exe, const Fusion& graph,
                                   const std::map<std::string, int64_t>& given, int runs);

}  // namespace fuserc::cmd
