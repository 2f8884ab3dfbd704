#include "cmd/pipeline_options.h"

#include <algorithm>
#include <sstream>

#include "codegen/nvrtc/nvrtc_toolchain.h"

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
  return std::make_unique<DiskCache>(cache_root(flags) + "/nvrtc",
                                     static_cast<uint64_t>(flags.max_mb) << 20);
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
