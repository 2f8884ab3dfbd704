// Owns the command-line options shared by the commands that run the compile pipeline:
// --arch parsing, --dump-after=STAGE and --time-passes, and the compile cache's options
// (--cache-dir, --no-cache, --cache-max-mb, and the remote cache's --cache-url,
// --cache-read-only and --cache-timeout).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/base/disk_cache.h"
#include "core/passes/pass_context.h"

namespace fuserc::cmd {

struct CacheFlags {
  std::string dir;  // the root of fuserc's caches; "": default_cache_root()
  bool disabled = false;
  int64_t max_mb = 1024;
  std::string url;  // the remote cache's (also $FUSERC_CACHE_URL); "": none
  bool read_only = false;
  double timeout_seconds = 10;
};

// --cache-dir always; the others when `for_compiling`.
void add_cache_flags(CLI::App& sub, CacheFlags& flags, bool for_compiling);

// --cache-url (or $FUSERC_CACHE_URL), --cache-read-only and --cache-timeout alone (bench has
// no local cache options).
void add_remote_cache_flags(CLI::App& sub, CacheFlags& flags);

// The root folder the flags select; throws UsageError when there is none to be found.
std::string cache_root(const CacheFlags& flags);

// The NVRTC compile cache (ROOT/nvrtc), or nullptr with --no-cache; with the remote cache
// behind it when there is a URL (the bearer token from $FUSERC_CACHE_TOKEN).
std::unique_ptr<DiskCache> open_compile_cache(const CacheFlags& flags);

struct PipelineFlags {
  std::vector<std::string> dump_after;
  bool time_passes = false;
  bool no_combo_kernels = false;  // CompileOptions::combo_kernels = false
};

void add_pipeline_flags(CLI::App& sub, PipelineFlags& flags);
PassContext make_pass_context(const PipelineFlags& flags);

// "sm_80,sm_90" (or "80,90") -> {80, 90}; refuses architectures NVRTC cannot target.
std::vector<int> parse_archs(const std::string& text);

// The names --dump-after accepts, in pipeline order.
std::vector<std::string> pipeline_stage_names();

}  // namespace fuserc::cmd
