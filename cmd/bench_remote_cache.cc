#include "cmd/bench_remote_cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "codegen/remote_cache/http_cache_backend.h"
#include "core/base/disk_cache.h"

namespace fuserc::cmd {

nlohmann::json bench_remote_cache(const std::vector<KernelSummary*>& kernels,
                                  NvrtcOptions options, const CacheFlags& flags, int runs) {
  namespace fs = std::filesystem;
  using Clock = std::chrono::steady_clock;
  const fs::path root =
      fs::temp_directory_path() / ("fuserc_bench_cache_" + std::to_string(::getpid()));
  struct RemoveAfter {
    fs::path path;
    ~RemoveAfter() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove_after{root};
  // One empty local cache in front of the server; it is counted and flushed when it closes.
  auto timed_compile = [&](const std::string& name, DiskCacheCounters& counters) {
    CacheFlags f = flags;
    f.dir = (root / name).string();
    f.disabled = false;
    std::unique_ptr<DiskCache> cache = open_compile_cache(f);
    options.cache = cache.get();
    const auto start = Clock::now();
    compile_kernels(kernels, options);
    cache->flush();  // sends what was compiled to the server
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    counters = cache->local_counters();
    options.cache = nullptr;
    return us;
  };
  DiskCacheCounters filled, fetched;
  const double fill_us = timed_compile("fill", filled);
  std::vector<double> times;
  for (int r = 0; r < std::max(1, runs); ++r)
    times.push_back(timed_compile("fetch" + std::to_string(r), fetched));
  std::sort(times.begin(), times.end());
  return {{"url", url_for_messages(flags.url)},
          {"fill_us", fill_us},
          {"fill_compiled", filled.stores},
          {"fill_stored", filled.remote_stored},
          {"fetch_us", times[times.size() / 2]},
          {"fetched", fetched.remote_fetched},
          {"fetch_compiled", fetched.stores},
          {"bytes", fetched.remote_bytes_fetched}};
}

}  // namespace fuserc::cmd
