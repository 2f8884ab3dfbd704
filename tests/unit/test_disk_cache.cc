// Tests of the content-addressed disk cache (core/base/disk_cache.h): round trips, damaged
// entries detected and discarded, least-recently-used eviction under the size bound, counters
// shared through the folder, many threads storing and reading the same keys, and a cache that
// cannot be written never failing the caller.
#include <fcntl.h>
#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "core/base/content_hash.h"
#include "core/base/disk_cache.h"
#include "core/base/file_io.h"
#include "temp_dir.h"

using namespace fuserc;
using fuserc::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string key_of(const std::string& s) {
  return content_hash_hex(s);
}

std::string entry_file(const std::string& dir, const std::string& key) {
  return dir + "/" + key.substr(0, 2) + "/" + key;
}

void set_mtime(const std::string& path, time_t seconds) {
  struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("disk cache: values come back as stored, misses are nothing", "[disk_cache]") {
  TempDir tmp;
  DiskCache cache(tmp / "c", 0);
  const std::string k = key_of("a");
  CHECK_FALSE(cache.get(k).has_value());
  std::string value("binary\0value\xff", 13);
  cache.put(k, value);
  REQUIRE(cache.get(k).has_value());
  CHECK(*cache.get(k) == value);
  cache.put(k, "");  // replacing, and an empty value, are fine
  CHECK(cache.get(k) == std::optional<std::string>(""));
  DiskCacheCounters c = cache.local_counters();
  CHECK(c.misses == 1);
  CHECK(c.hits == 3);
  CHECK(c.stores == 2);
  CHECK(fs::exists(entry_file(tmp / "c", k)));
  CHECK(cache.store_problem().empty());
}

TEST_CASE("disk cache: a damaged entry is discarded and reported as a miss", "[disk_cache]") {
  TempDir tmp;
  const std::string dir = tmp / "c";
  const std::string k = key_of("kernel");
  const std::string value(1000, 'v');
  auto damaged_is_miss = [&](auto damage) {
    DiskCache cache(dir, 0);
    cache.put(k, value);
    const std::string path = entry_file(dir, k);
    std::string bytes = read_file(path);
    damage(bytes);
    write_file_atomically(path, bytes);
    CHECK_FALSE(cache.get(k).has_value());
    CHECK_FALSE(fs::exists(path));  // deleted, so that the caller's rebuild replaces it
    CHECK(cache.local_counters().discarded == 1);
    cache.put(k, value);
    CHECK(cache.get(k) == value);
  };
  SECTION("a flipped byte in the value") {
    damaged_is_miss([](std::string& b) { b[b.size() - 10] ^= 1; });
  }
  SECTION("truncated") {
    damaged_is_miss([](std::string& b) { b.resize(b.size() / 2); });
  }
  SECTION("empty") {
    damaged_is_miss([](std::string& b) { b.clear(); });
  }
  SECTION("longer") {
    damaged_is_miss([](std::string& b) { b += "x"; });
  }
  SECTION("another key's entry under this name") {
    damaged_is_miss([&](std::string& b) {
      const std::string other = key_of("other");
      b.replace(b.find(k), k.size(), other);
    });
  }
}

TEST_CASE("disk cache: least recently used entries are evicted beyond the bound", "[disk_cache]") {
  TempDir tmp;
  const std::string dir = tmp / "c";
  const std::string value(1000, 'x');
  std::vector<std::string> keys;
  {
    DiskCache cache(dir, 0);  // unbounded: fill it
    for (int i = 0; i < 20; ++i) {
      keys.push_back(key_of("k" + std::to_string(i)));
      cache.put(keys.back(), value);
      set_mtime(entry_file(dir, keys.back()), 1000000 + i);  // k0 oldest ... k19 newest
    }
  }
  DiskCacheStats full = DiskCache(dir, 0).stats();
  CHECK(full.entries == 20);
  const uint64_t entry_bytes = full.bytes / 20;
  CHECK(entry_bytes > 1000);
  {
    DiskCache cache(dir, 10 * entry_bytes);  // 21 entries: down to 90%, 9 entries
    CHECK(cache.get(keys[0]).has_value());   // used now: the most recent
    cache.put(key_of("new"), value);
    cache.flush();
    CHECK(cache.local_counters().evictions == 12);
  }
  DiskCacheStats s = DiskCache(dir, 0).stats();
  CHECK(s.entries == 9);
  CHECK(s.bytes == 9 * entry_bytes);
  CHECK(s.counters.evictions == 12);
  DiskCache cache(dir, 0);
  CHECK(cache.get(keys[0]).has_value());
  CHECK(cache.get(key_of("new")).has_value());
  for (int i = 1; i <= 12; ++i) CHECK_FALSE(cache.get(keys[i]).has_value());
  for (int i = 13; i < 20; ++i) CHECK(cache.get(keys[i]).has_value());
}

TEST_CASE("disk cache: counters are shared through the folder; clear empties it", "[disk_cache]") {
  TempDir tmp;
  const std::string dir = tmp / "c";
  for (int process = 0; process < 3; ++process) {
    DiskCache cache(dir, 0);
    cache.get(key_of("x"));
    cache.put(key_of("x" + std::to_string(process)), "v");
  }  // each flushes on destruction
  DiskCacheStats s = DiskCache(dir, 0).stats();
  CHECK(s.entries == 3);
  CHECK(s.counters.misses == 3);
  CHECK(s.counters.stores == 3);
  CHECK(DiskCache(dir, 0).clear() == 3);
  s = DiskCache(dir, 0).stats();
  CHECK(s.entries == 0);
  CHECK(s.counters.stores == 0);
  CHECK(s.bytes == 0);
}

TEST_CASE("disk cache: threads storing and reading the same keys see whole values",
          "[disk_cache]") {
  TempDir tmp;
  DiskCache cache(tmp / "c", 0);
  std::vector<std::string> keys, values;
  for (int i = 0; i < 8; ++i) {
    keys.push_back(key_of("t" + std::to_string(i)));
    values.push_back(std::string(50000 + i, static_cast<char>('a' + i)));
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 30; ++round) {
        const size_t i = static_cast<size_t>((t + round) % 8);
        cache.put(keys[i], values[i]);
        auto got = cache.get(keys[(i + 3) % 8]);
        if (got && *got != values[(i + 3) % 8]) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(bad == 0);
  CHECK(cache.local_counters().discarded == 0);
  for (size_t i = 0; i < keys.size(); ++i) CHECK(cache.get(keys[i]) == values[i]);
}

TEST_CASE("disk cache: a cache that cannot be written does not fail the caller", "[disk_cache]") {
  TempDir tmp;
  write_file_atomically(tmp / "file", "not a folder");
  DiskCache cache(tmp / "file/c", 0);
  const std::string k = key_of("k");
  cache.put(k, "value");
  CHECK_FALSE(cache.get(k).has_value());
  CHECK(cache.store_problem().find("file/c") != std::string::npos);
  cache.flush();
}

TEST_CASE("default cache root", "[disk_cache]") {
  const char* names[] = {"FUSERC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  std::vector<std::optional<std::string>> saved;
  for (const char* n : names) {
    const char* v = std::getenv(n);
    saved.push_back(v ? std::optional<std::string>(v) : std::nullopt);
  }
  ::setenv("FUSERC_CACHE_DIR", "/x/y", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::setenv("HOME", "/home/u", 1);
  CHECK(default_cache_root() == "/x/y");
  ::unsetenv("FUSERC_CACHE_DIR");
  CHECK(default_cache_root() == "/xdg/fuserc");
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(default_cache_root() == "/home/u/.cache/fuserc");
  ::unsetenv("HOME");
  CHECK(default_cache_root().empty());
  for (size_t i = 0; i < saved.size(); ++i) {
    if (saved[i]) ::setenv(names[i], saved[i]->c_str(), 1);
  }
}
