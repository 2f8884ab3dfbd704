#include "cmd/bench_load.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/bench_timing.h"
#include "core/base/diagnostics.h"
#include "runtime/executable.h"

namespace fuserc::cmd {
namespace {

// The process's resident memory in bytes (VmRSS), or 0 where /proc is not there.
int64_t resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      int64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    std::getline(in, key);
  }
  return 0;
}

}  // namespace

void run_load_bench(const LoadBenchOptions& o) {
  if (o.runs < 1) throw UsageError("--runs must be >= 1");
  const std::string& path = o.package;
  const uint64_t file_bytes = std::filesystem::file_size(path);
  // Loading to a ready Executable (open, trailer, head, checks; nothing of the blobs or the
  // external data is read).
  double load = median_us(o.runs, [&] { auto exe = Executable::load(path); });
  const int64_t rss_before = resident_bytes();
  auto exe = Executable::load(path);
  const int64_t rss_loaded = resident_bytes();
  const auto& m = exe->metadata();
  double bind = bind_new_shape_us(*exe, o.runs);
  // The constants' first use: mapped (or read) and hashed, on a fresh load each time.
  uint64_t constant_bytes = 0;
  for (size_t i = 0; i < exe->num_constants(); ++i)
    constant_bytes += m.constants()->Get(static_cast<uint32_t>(i))->data()->size();
  const int constant_runs = std::min(o.runs, constant_bytes > (uint64_t{1} << 26) ? 3 : 50);
  double first_use = median_us(constant_runs, [&] {
    auto fresh = Executable::load(path);
    for (size_t i = 0; i < fresh->num_constants(); ++i) fresh->constant_bytes(i);
  });
  nlohmann::json j = {{"package", path},
                      {"package_bytes", file_bytes},
                      {"constants", exe->num_constants()},
                      {"constant_bytes", constant_bytes},
                      {"kernels", m.kernels()->size()},
                      {"load_us", load},
                      {"load_resident_bytes", rss_loaded - rss_before},
                      {"bind_us", bind},
                      {"constants_first_use_us", first_use}};
  if (o.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "fuserc bench %s (%llu bytes, %zu constants of %llu bytes, %u kernels)\n"
                "  load package (file)        %12.1f us (median of %d)\n"
                "  resident memory it adds    %12lld bytes\n"
                "  bind a new shape           %12.1f us\n"
                "  constants' first use       %12.1f us (map or read, hash; median of %d)\n",
                path.c_str(), static_cast<unsigned long long>(file_bytes), exe->num_constants(),
                static_cast<unsigned long long>(constant_bytes), m.kernels()->size(), load,
                o.runs, static_cast<long long>(rss_loaded - rss_before), bind, first_use,
                constant_runs);
  std::cout << buf;
}

}  // namespace fuserc::cmd
