#include "cmd/pipeline_options.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "codegen/nvrtc/nvrtc_toolchain.h"
#include "codegen/remote_cache/http_cache_backend.h"

#include "core/base/diagnostics.h"
#include "core/base/text_util.h"
#include "core/passes/presegmentation.h"

namespace fuserc::cmd {

std::vector<std::string> pipeline_stage_names() {
  std::vector<std::string> names = {"parse"};
  for (const auto& p : presegmentation_passes()) names.push_back(p.name);
  for (const char* n : {"segment", "plan-memory", "lower", "emit"}) names.push_back(n);
  return names;
}

void add_pipeline_flags(CLI::App& sub, PipelineFlags& flags) {
  sub.add_option(
         "--dump-after", flags.dump_after,
         "print the IR after a stage (repeatable): " + join(pipeline_stage_names()) + ", or all")
      ->delimiter(',');
  sub.add_flag("--time-passes", flags.time_passes,
               "print a table of where compile time goes (on stderr)");
  sub.add_flag("--no-combo-kernels", flags.no_combo_kernels,
               "launch every kernel on its own, in segment order, instead of gathering "
               "independent pointwise kernels into combo kernels (to time one against the "
               "other)");
}

PassContext make_pass_context(const PipelineFlags& flags) {
  PassContext ctx;
  auto names = pipeline_stage_names();
  for (const auto& d : flags.dump_after) {
    if (d != "all" && std::find(names.begin(), names.end(), d) == names.end())
      throw UsageError("--dump-after: unknown stage " + quote(d) + did_you_mean(d, names) +
                       "; stages: " + join(names) + ", all");
    ctx.dump_after.insert(d);
  }
  ctx.time_passes = flags.time_passes;
  return ctx;
}

void add_cache_flags(CLI::App& sub, CacheFlags& flags, bool for_compiling) {
  sub.add_option("--cache-dir", flags.dir,
                 "the folder of fuserc's caches (default: $FUSERC_CACHE_DIR, else "
                 "$XDG_CACHE_HOME/fuserc, else ~/.cache/fuserc); NVRTC results go in its nvrtc/ "
                 "subfolder");
  if (!for_compiling) return;
  sub.add_flag("--no-cache", flags.disabled,
               "neither read nor write the compile cache (every kernel is compiled by NVRTC)");
  sub.add_option("--cache-max-mb", flags.max_mb,
                 "the compile cache's size bound in MiB; least recently used entries are evicted "
                 "beyond it (default: 1024)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  add_remote_cache_flags(sub, flags);
}

void add_remote_cache_flags(CLI::App& sub, CacheFlags& flags) {
  sub.add_option("--cache-url", flags.url,
                 "a remote compile cache on an HTTP server, behind the local one: entries are "
                 "fetched with GET and stored with PUT at URL/ac/<64 hex digits> (bazel-remote, "
                 "nginx with WebDAV, ...); a server that is down or slow is given up on with one "
                 "warning, and a damaged entry is ignored and replaced. A bearer token is taken "
                 "from $FUSERC_CACHE_TOKEN only")
      ->envname("FUSERC_CACHE_URL");
  sub.add_flag("--cache-read-only", flags.read_only,
               "fetch from the remote cache but never store into it (for untrusted builds)");
  sub.add_option("--cache-timeout", flags.timeout_seconds,
                 "seconds a remote cache request may take, connecting included; a failed one is "
                 "tried once more (default: 10)")
      ->check(CLI::Range(0.001, 3600.0));
}

std::string cache_root(const CacheFlags& flags) {
  std::string root = flags.dir.empty() ? default_cache_root() : flags.dir;
  if (root.empty())
    throw UsageError(
        "no cache folder: set --cache-dir, FUSERC_CACHE_DIR, XDG_CACHE_HOME or HOME, or use "
        "--no-cache");
  return root;
}

std::unique_ptr<DiskCache> open_compile_cache(const CacheFlags& flags) {
  if (flags.disabled) return nullptr;
  auto cache = std::make_unique<DiskCache>(cache_root(flags) + "/nvrtc",
                                          static_cast<uint64_t>(flags.max_mb) << 20);
  if (!flags.url.empty()) {
    HttpCacheOptions o;
    o.url = flags.url;
    if (const char* token = std::getenv("FUSERC_CACHE_TOKEN")) o.bearer_token = token;
    o.timeout_seconds = flags.timeout_seconds;
    cache->set_backend(make_http_cache_backend(std::move(o)), flags.read_only);
  } else if (flags.read_only) {
    throw UsageError("--cache-read-only goes with --cache-url (or FUSERC_CACHE_URL)");
  }
  return cache;
}

std::vector<int> parse_archs(const std::string& text) {
  const std::vector<int>& supported = nvrtc_toolchain().supported_archs;
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::string digits = item.rfind("sm_", 0) == 0 ? item.substr(3) : item;
    int arch = 0;
    bool ok = !digits.empty() && digits.size() <= 4 &&
              std::all_of(digits.begin(), digits.end(), ::isdigit);
    if (ok) arch = std::stoi(digits);
    if (!ok || std::find(supported.begin(), supported.end(), arch) == supported.end()) {
      std::string list;
      for (int s : supported) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(s);
      throw UsageError("--arch: " + quote(item) + " is not an architecture NVRTC can target (" +
                       list + ")");
    }
    if (std::find(out.begin(), out.end(), arch) == out.end()) out.push_back(arch);
  }
  if (out.empty()) throw UsageError("--arch: no architecture given");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace fuserc::cmd
