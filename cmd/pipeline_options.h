// Owns the command-line options shared by the commands that run the compile pipeline:
// --arch parsing, --dump-after=STAGE and --time-passes.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/passes/pass_context.h"

namespace fuserc::cmd {

struct PipelineFlags {
  std::vector<std::string> dump_after;
  bool time_passes = false;
};

void add_pipeline_flags(CLI::App& sub, PipelineFlags& flags);
PassContext make_pass_context(const PipelineFlags& flags);

// "sm_80,sm_90" (or "80,90") -> {80, 90}; refuses architectures NVRTC cannot target.
std::vector<int> parse_archs(const std::string& text);

// The names --dump-after accepts, in pipeline order.
std::vector<std::string> pipeline_stage_names();

}  // namespace fuserc::cmd
