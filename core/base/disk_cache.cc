#include "core/base/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <vector>

#include "core/base/content_hash.h"
#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "core/base/file_lock.h"

namespace fs = std::filesystem;

namespace fuserc {
namespace {

constexpr char kMagic[8] = {'F', 'Z', 'C', 'A', 'C', 'H', 'E', '1'};
constexpr size_t kKeySize = 32;
constexpr size_t kHeaderSize = sizeof kMagic + kKeySize + 8 + 8;
constexpr int64_t kStaleTempSeconds = 3600;  // a temporary file this old belongs to a dead process
constexpr int64_t kRemoteDownSeconds = 60;   // how long a given-up backend stays given up

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool is_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_key(std::string_view s) {
  return s.size() == kKeySize && is_hex(s);
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t get_u64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

std::string encode_entry(const std::string& key, std::string_view value) {
  std::string out(kMagic, sizeof kMagic);
  out.reserve(kHeaderSize + value.size());
  out += key;
  put_u64(out, value.size());
  put_u64(out, content_hash64(value));
  out += value;
  return out;
}

// The value of a well-formed entry for `key`, or nothing.
std::optional<std::string> decode_entry(const std::string& key, const std::string& bytes) {
  if (bytes.size() < kHeaderSize || bytes.compare(0, sizeof kMagic, kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  if (bytes.compare(sizeof kMagic, kKeySize, key) != 0) return std::nullopt;
  const uint64_t size = get_u64(bytes, sizeof kMagic + kKeySize);
  const uint64_t hash = get_u64(bytes, sizeof kMagic + kKeySize + 8);
  if (size != bytes.size() - kHeaderSize) return std::nullopt;
  std::string value = bytes.substr(kHeaderSize);
  if (content_hash64(value) != hash) return std::nullopt;
  return value;
}

struct EntryFile {
  std::string path;
  uint64_t bytes;
  struct timespec mtime;
};

bool older(const EntryFile& a, const EntryFile& b) {
  if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
  if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec < b.mtime.tv_nsec;
  return a.path < b.path;
}

// Every entry file under `dir` (its two-hex-digit subfolders); stale temporary files are
// deleted on the way when `remove_stale_temps`. Files that vanish meanwhile are skipped.
std::vector<EntryFile> scan_entries(const std::string& dir, bool remove_stale_temps) {
  std::vector<EntryFile> out;
  std::error_code ec;
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  for (fs::directory_iterator shard(dir, ec), end; !ec && shard != end; shard.increment(ec)) {
    const std::string shard_name = shard->path().filename().string();
    if (shard_name.size() != 2 || !is_hex(shard_name)) continue;
    std::error_code ec2;
    for (fs::directory_iterator f(shard->path(), ec2); !ec2 && f != end; f.increment(ec2)) {
      const std::string name = f->path().filename().string();
      const std::string path = f->path().string();
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (is_key(name) && name.compare(0, 2, shard_name) == 0) {
        out.push_back({path, static_cast<uint64_t>(st.st_size), st.st_mtim});
      } else if (remove_stale_temps && name.rfind('.', 0) == 0 &&
                 name.find(".tmp.") != std::string::npos &&
                 now - static_cast<int64_t>(st.st_mtim.tv_sec) > kStaleTempSeconds) {
        ::unlink(path.c_str());
      }
    }
  }
  return out;
}

// Every counter, by its name in the stats file: the one list the functions below walk.
struct CounterField {
  const char* name;
  uint64_t DiskCacheCounters::*member;
};
constexpr CounterField kCounterFields[] = {
    {"hits", &DiskCacheCounters::hits},
    {"misses", &DiskCacheCounters::misses},
    {"stores", &DiskCacheCounters::stores},
    {"evictions", &DiskCacheCounters::evictions},
    {"discarded", &DiskCacheCounters::discarded},
    {"remote_fetched", &DiskCacheCounters::remote_fetched},
    {"remote_not_found", &DiskCacheCounters::remote_not_found},
    {"remote_damaged", &DiskCacheCounters::remote_damaged},
    {"remote_errors", &DiskCacheCounters::remote_errors},
    {"remote_stored", &DiskCacheCounters::remote_stored},
    {"remote_bytes_fetched", &DiskCacheCounters::remote_bytes_fetched},
    {"remote_bytes_stored", &DiskCacheCounters::remote_bytes_stored},
};

DiskCacheCounters read_counters(const std::string& path) {
  DiskCacheCounters c;
  std::string text;
  try {
    text = read_file(path, 1 << 16);
  } catch (const UserError&) {
    return c;  // none yet
  }
  std::istringstream in(text);
  std::string name;
  uint64_t value = 0;
  while (in >> name >> value)
    for (const auto& f : kCounterFields)
      if (name == f.name) c.*f.member = value;
  return c;
}

std::string format_counters(const DiskCacheCounters& c) {
  std::string out;
  for (const auto& f : kCounterFields) out += std::string(f.name) + ' ' + std::to_string(c.*f.member) + '\n';
  return out;
}

void add_counters(DiskCacheCounters& to, const DiskCacheCounters& c) {
  for (const auto& f : kCounterFields) to.*f.member += c.*f.member;
}

bool counts_anything(const DiskCacheCounters& c) {
  for (const auto& f : kCounterFields)
    if (c.*f.member != 0) return true;
  return false;
}

}  // namespace

std::string default_cache_root() {
  if (std::string d = env("FUSERC_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/fuserc";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/fuserc";
  return "";
}

DiskCache::DiskCache(std::string dir, uint64_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {}

DiskCache::~DiskCache() {
  try {
    flush();
  } catch (...) {
    // Counters and eviction are best effort; a destructor must not throw.
  }
}

std::string DiskCache::entry_path(const std::string& key) const {
  return dir_ + "/" + key.substr(0, 2) + "/" + key;
}

std::optional<std::string> DiskCache::get(const std::string& key, bool counted) {
  FUSERC_CHECK(is_key(key), "bad cache key " + quote(key));
  const std::string path = entry_path(key);
  std::string bytes;
  bool here = true;
  try {
    bytes = read_file(path);
  } catch (const UserError&) {
    here = false;
  }
  std::optional<std::string> value;
  if (here) {
    value = decode_entry(key, bytes);
    if (!value) {
      ::unlink(path.c_str());  // damaged: the caller rebuilds and stores it again
      ++discarded_;
    }
  }
  if (!value && counted && backend_) {  // from the backend (prefetched, or asked now)
    std::lock_guard<std::mutex> lock(backend_mutex_);
    if (!asked_.count(key)) fetch_from_backend({key});
    if (auto it = fetched_.find(key); it != fetched_.end()) {
      value = std::move(it->second);
      fetched_.erase(it);
    }
  }
  if (!value) {
    if (counted) ++misses_;
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // most recently used
  if (counted) ++hits_;
  return value;
}

void DiskCache::put(const std::string& key, std::string_view value, bool counted) {
  FUSERC_CHECK(is_key(key), "bad cache key " + quote(key));
  const std::string path = entry_path(key);
  try {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (ec) throw UserError(SourcePlace{dir_}, "cannot create directory: " + ec.message());
    write_file_replacing(path, encode_entry(key, value));
    if (counted) ++stores_;
    wrote_ = true;
  } catch (const UserError& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (store_problem_.empty()) store_problem_ = e.what();
  }
  if (counted && backend_ && !backend_read_only_) {
    std::lock_guard<std::mutex> lock(backend_mutex_);
    pending_.emplace_back(key, encode_entry(key, value));
  }
}

void DiskCache::upload_pending() {
  if (!backend_ || pending_.empty()) return;
  std::vector<std::pair<std::string, std::string>> entries;
  entries.swap(pending_);
  std::vector<CacheStatus> done = backend_->store(entries);
  FUSERC_CHECK(done.size() == entries.size(), "the cache backend answered the wrong count");
  for (size_t i = 0; i < entries.size(); ++i) {
    if (done[i] == CacheStatus::ok) {
      ++remote_.remote_stored;
      remote_.remote_bytes_stored += entries[i].second.size();
    } else if (done[i] == CacheStatus::failed) {
      ++remote_.remote_errors;
    }
  }
  note_if_given_up();
}

void DiskCache::note_if_given_up() {
  if (noted_down_ || !backend_->given_up()) return;
  noted_down_ = true;
  try {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    write_file_replacing(dir_ + "/remote-down", backend_->describe() + "\n");
  } catch (const UserError&) {
    // Only a shortcut for the other processes.
  }
}

void DiskCache::set_backend(std::unique_ptr<CacheBackend> backend, bool read_only) {
  std::lock_guard<std::mutex> lock(backend_mutex_);
  backend_ = std::move(backend);
  backend_read_only_ = read_only;
  noted_down_ = false;
  if (!backend_) return;
  // Another process gave up on this server under a minute ago: do not wait for it again.
  const std::string marker = dir_ + "/remote-down";
  struct stat st;
  if (::stat(marker.c_str(), &st) != 0) return;
  if (std::time(nullptr) - st.st_mtim.tv_sec > kRemoteDownSeconds) return;
  try {
    if (read_file(marker, 1 << 12) == backend_->describe() + "\n") {
      backend_->give_up_quietly();
      noted_down_ = true;
    }
  } catch (const UserError&) {
  }
}

void DiskCache::prefetch(const std::vector<std::string>& keys) {
  if (!backend_) return;
  std::lock_guard<std::mutex> lock(backend_mutex_);
  std::vector<std::string> missing;
  std::set<std::string> seen;
  for (const std::string& key : keys) {
    FUSERC_CHECK(is_key(key), "bad cache key " + quote(key));
    struct stat st;
    if (asked_.count(key) || !seen.insert(key).second) continue;
    if (::stat(entry_path(key).c_str(), &st) == 0) continue;  // here (get() checks it)
    missing.push_back(key);
  }
  if (!missing.empty()) fetch_from_backend(missing);
}

void DiskCache::fetch_from_backend(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) asked_.insert(key);
  std::vector<CacheFetch> got = backend_->fetch(keys);
  FUSERC_CHECK(got.size() == keys.size(), "the cache backend answered the wrong number of keys");
  for (size_t i = 0; i < keys.size(); ++i) {
    CacheFetch& f = got[i];
    switch (f.status) {
      case CacheStatus::not_found: ++remote_.remote_not_found; break;
      case CacheStatus::failed: ++remote_.remote_errors; break;
      case CacheStatus::skipped: break;
      case CacheStatus::ok: {
        std::optional<std::string> value = decode_entry(keys[i], f.bytes);
        if (!value) {
          ++remote_.remote_damaged;  // truncated or altered: compiled here and stored again
          break;
        }
        ++remote_.remote_fetched;
        remote_.remote_bytes_fetched += f.bytes.size();
        fetched_[keys[i]] = std::move(*value);  // usable even if the folder cannot be written
        try {
          const std::string path = entry_path(keys[i]);
          std::error_code ec;
          fs::create_directories(fs::path(path).parent_path(), ec);
          write_file_replacing(path, f.bytes);
          wrote_ = true;
        } catch (const UserError& e) {
          std::lock_guard<std::mutex> lock(mutex_);
          if (store_problem_.empty()) store_problem_ = e.what();
        }
        break;
      }
    }
  }
  note_if_given_up();
}

void DiskCache::flush() {
  if (flushed_) return;
  flushed_ = true;
  if (backend_) {
    std::lock_guard<std::mutex> lock(backend_mutex_);
    upload_pending();
  }
  DiskCacheCounters mine = local_counters();
  if (!counts_anything(mine) && !wrote_) return;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return;  // nothing was stored and there is no cache yet
  FileLock lock(dir_ + "/lock", FileLock::Mode::Wait);
  if (!lock.locked()) return;  // a read-only cache: nothing to count or evict
  if (wrote_) evict_if_needed();
  mine.evictions = evictions_;
  DiskCacheCounters all = read_counters(dir_ + "/stats");
  add_counters(all, mine);
  try {
    write_file_replacing(dir_ + "/stats", format_counters(all));
  } catch (const UserError&) {
    // Counters are informative only.
  }
}

void DiskCache::evict_if_needed() {
  if (max_bytes_ == 0) return;
  std::vector<EntryFile> entries = scan_entries(dir_, true);
  uint64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  if (total <= max_bytes_) return;
  const uint64_t target = max_bytes_ / 10 * 9;
  std::sort(entries.begin(), entries.end(), older);
  for (const auto& e : entries) {
    if (total <= target) break;
    if (::unlink(e.path.c_str()) == 0) ++evictions_;
    total -= e.bytes;
  }
}

DiskCacheStats DiskCache::stats() const {
  DiskCacheStats s;
  for (const auto& e : scan_entries(dir_, false)) {
    ++s.entries;
    s.bytes += e.bytes;
  }
  s.counters = read_counters(dir_ + "/stats");
  return s;
}

uint64_t DiskCache::clear() {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return 0;
  FileLock lock(dir_ + "/lock", FileLock::Mode::Wait);
  uint64_t n = 0;
  for (const auto& e : scan_entries(dir_, true))
    if (::unlink(e.path.c_str()) == 0) ++n;
  std::vector<fs::path> shards;
  for (fs::directory_iterator shard(dir_, ec), end; !ec && shard != end; shard.increment(ec)) {
    const std::string name = shard->path().filename().string();
    if (name.size() == 2 && is_hex(name)) shards.push_back(shard->path());
  }
  for (const auto& shard : shards) fs::remove_all(shard, ec);
  ::unlink((dir_ + "/stats").c_str());
  return n;
}

DiskCacheCounters DiskCache::local_counters() const {
  DiskCacheCounters c;
  {
    std::lock_guard<std::mutex> lock(backend_mutex_);
    c = remote_;
  }
  c.hits = hits_;
  c.misses = misses_;
  c.stores = stores_;
  c.discarded = discarded_;
  c.evictions = evictions_;
  return c;
}

std::string DiskCache::store_problem() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return store_problem_;
}

}  // namespace fuserc
