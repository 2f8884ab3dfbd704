// `fuserc cache stats|clear`: look at or empty fuserc's caches (NVRTC results in nvrtc/, the
// emulator's compiled kernels in emu/).
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cmd/commands.h"
#include "cmd/pipeline_options.h"
#include "core/base/diagnostics.h"
#include "core/base/disk_cache.h"

namespace fuserc::cmd {
namespace {

namespace fs = std::filesystem;

struct FolderSize {
  uint64_t files = 0, bytes = 0;
};

FolderSize folder_size(const std::string& dir) {
  FolderSize s;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (!it->is_regular_file(ec2)) continue;
    ++s.files;
    s.bytes += it->file_size(ec2);
  }
  return s;
}

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "cache",
      "Show or clear fuserc's caches: NVRTC results (nvrtc/, shared by every fuserc compile) and "
      "the emulator's compiled kernels (emu/).");
  sub->require_subcommand(1);
  sub->fallthrough();  // --cache-dir before or after stats/clear
  auto flags = std::make_shared<CacheFlags>();
  add_cache_flags(*sub, *flags, false);
  sub->footer(
      "The compile cache is content-addressed: a key hashes the CUDA source, the NVRTC options,\n"
      "the architecture, the NVRTC version and library and the fuserc version. Entries are\n"
      "written atomically and checked when read (a damaged one is rebuilt); `fuserc compile\n"
      "--cache-max-mb` bounds its size, evicting the least recently used entries. With\n"
      "`--cache-url URL` (or FUSERC_CACHE_URL) a remote cache on an HTTP server stands behind\n"
      "it: `fuserc compile --help` says how; its counters are kept here.");

  auto* stats =
      sub->add_subcommand("stats", "Print the caches' folder, entries, size and counters");
  stats->callback([flags] {
    const std::string root = cache_root(*flags);
    DiskCache nvrtc(root + "/nvrtc", 0);
    DiskCacheStats s = nvrtc.stats();
    const DiskCacheCounters& c = s.counters;
    FolderSize emu = folder_size(root + "/emu");
    std::cout << "cache folder: " << root << "\n"
              << "nvrtc: " << s.entries << " entries, " << mib(s.bytes) << "\n"
              << "  hits " << c.hits << ", misses " << c.misses << ", stores " << c.stores
              << ", evictions " << c.evictions << ", damaged entries discarded " << c.discarded
              << " (all processes, since the cache was created or cleared)\n"
              << "remote: fetched " << c.remote_fetched << ", not found " << c.remote_not_found
              << ", damaged " << c.remote_damaged << ", errors " << c.remote_errors
              << ", stored " << c.remote_stored << "; " << c.remote_bytes_fetched
              << " bytes fetched, " << c.remote_bytes_stored << " bytes stored"
              << " (--cache-url: all processes using this folder)\n"
              << "emu: " << emu.files << " files, " << mib(emu.bytes) << "\n";
  });

  auto* clear = sub->add_subcommand("clear", "Delete everything in the caches");
  clear->callback([flags] {
    const std::string root = cache_root(*flags);
    DiskCache nvrtc(root + "/nvrtc", 0);
    const uint64_t entries = nvrtc.clear();
    FolderSize emu = folder_size(root + "/emu");
    std::error_code ec;
    fs::remove_all(root + "/emu", ec);
    if (ec) throw UserError(SourcePlace{root + "/emu"}, "cannot delete: " + ec.message());
    std::cout << "fuserc: cleared " << root << ": " << entries << " NVRTC entries, " << emu.files
              << " emulator files\n";
  });
}

}  // namespace fuserc::cmd
