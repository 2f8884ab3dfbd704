// Owns `fuserc bench GRAPH --cache-url URL`: what a remote compile cache saves. It fills the
// server from an empty local cache (compiling only what the server lacks), then times getting
// every kernel into another empty local cache, as a second machine would: the fetches, checks
// and local writes, with no NVRTC.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/pipeline_options.h"
#include "codegen/nvrtc/nvrtc_compiler.h"

namespace fuserc::cmd {

// {"url", "fill_us", "fill_compiled", "fill_stored", "fetch_us" (median of `runs`),
//  "fetched", "fetch_compiled" (NVRTC compilations in the last fetch run: 0 when the server
//  served everything), "bytes"}. The local caches live in a temporary folder, removed after.
nlohmann::json bench_remote_cache(const std::vector<KernelSummary*>& kernels,
                                  NvrtcOptions options, const CacheFlags& flags, int runs);

}  // namespace fuserc::cmd
