// Owns a content-addressed store of byte strings on disk, shared by any number of processes
// and threads: the folder layout, entry files that check themselves, atomic stores, the size
// bound with least-recently-used eviction, and counters shared by every process using it.
//
//   DIR/ab/ab12...ef   an entry: its key is the 32-hex-digit content hash of every input the
//                      value depends on; the file holds a header (magic, key, size, hash of the
//                      value) and the value. A reader checks all of it: a damaged entry is
//                      deleted and reported as a miss, so the caller rebuilds it.
//   DIR/stats          counters (hits, misses, stores, evictions, discarded), updated under
//   DIR/lock           an flock by each process when it is done with the cache.
//
// Entries are written to a temporary file in the same folder and renamed, so a reader sees a
// whole entry or none. A hit refreshes the entry's modification time; eviction removes the
// oldest first.
//
// A backend (cache_backend.h: a remote cache server) may stand behind the folder: an entry
// missing here is asked of it, checked like a local one (a damaged one is ignored and counted)
// and written here; an entry stored here is queued and sent there by flush(), unless
// read-only. Only counted entries travel: bookkeeping entries (counted = false) describe this
// machine. When the backend is given up on, DIR/remote-down names it for a minute, so that the
// other processes of the same build do not each wait for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/cache_backend.h"

namespace fuserc {

// The root of fuserc's caches: $FUSERC_CACHE_DIR, else $XDG_CACHE_HOME/fuserc, else
// $HOME/.cache/fuserc; "" when none of them is set. Each cache uses a subfolder (nvrtc/, emu/).
std::string default_cache_root();

// Counters of a cache, kept in its `stats` file (disk_cache.cc lists every field once, in
// kCounterFields: add a counter there too).
struct DiskCacheCounters {
  uint64_t hits = 0, misses = 0, stores = 0, evictions = 0, discarded = 0;
  // The backend's: entries fetched (whole and checked), not there, damaged (ignored), failed
  // requests, entries stored, and the bytes each way.
  uint64_t remote_fetched = 0, remote_not_found = 0, remote_damaged = 0, remote_errors = 0,
           remote_stored = 0, remote_bytes_fetched = 0, remote_bytes_stored = 0;
};

struct DiskCacheStats {
  uint64_t entries = 0;
  uint64_t bytes = 0;          // of the entry files
  DiskCacheCounters counters;  // since the cache was created or cleared, all processes
};

class DiskCache {
 public:
  // `dir` is created on the first store. `max_bytes` bounds the entries' total size (0: none).
  DiskCache(std::string dir, uint64_t max_bytes);
  ~DiskCache();  // flush()es
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  const std::string& dir() const { return dir_; }

  // Puts `backend` behind the folder (see above); `read_only`: never store into it.
  void set_backend(std::unique_ptr<CacheBackend> backend, bool read_only);
  const CacheBackend* backend() const { return backend_.get(); }

  // Asks the backend at once, concurrently, for those of `keys` that are not in the folder, so
  // that the get()s after it find them here. Without a backend, does nothing. Thread-safe.
  void prefetch(const std::vector<std::string>& keys);

  // The value stored under `key` (32 lowercase hex digits), or nothing. Thread-safe.
  // `counted`: false for bookkeeping entries that should not show in the hit/miss counters.
  std::optional<std::string> get(const std::string& key, bool counted = true);

  // Stores `value` under `key` (and queues it for the backend). Never throws: a failure (full
  // disk, read-only folder) is remembered in store_problem() and the value is simply not
  // cached. Thread-safe.
  void put(const std::string& key, std::string_view value, bool counted = true);

  // Sends the entries queued for the backend, adds this process's counters to the shared ones
  // and, if this process stored anything, evicts least recently used entries until the total
  // is at most 90% of the bound. Called by the destructor; calling it earlier is allowed
  // (counters are then only added once).
  void flush();

  // Scans the folder. Does not create it.
  DiskCacheStats stats() const;

  // Deletes every entry, temporary file and counter; returns the number of entries deleted.
  uint64_t clear();

  // This process's counters so far.
  DiskCacheCounters local_counters() const;

  // The first failure to store an entry ("" if none).
  std::string store_problem() const;

 private:
  std::string entry_path(const std::string& key) const;
  void evict_if_needed();
  // Asks the backend for `keys` (none asked before), checks what comes back and writes the
  // whole entries to the folder. Called with backend_mutex_ held.
  void fetch_from_backend(const std::vector<std::string>& keys);
  // Sends the queued entries (backend_mutex_ held).
  void upload_pending();
  // Writes DIR/remote-down once the backend is given up on (backend_mutex_ held).
  void note_if_given_up();

  std::string dir_;
  uint64_t max_bytes_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, stores_{0}, discarded_{0};
  std::unique_ptr<CacheBackend> backend_;
  bool backend_read_only_ = false;
  mutable std::mutex backend_mutex_;  // the backend is used by one thread at a time
  std::set<std::string> asked_;    // keys the backend was asked for (under backend_mutex_)
  std::map<std::string, std::string> fetched_;  // checked values from it, until get() takes them
  std::vector<std::pair<std::string, std::string>> pending_;  // entries to send it
  bool noted_down_ = false;
  DiskCacheCounters remote_;       // only the remote_* fields (under backend_mutex_)
  std::atomic<bool> wrote_{false};
  uint64_t evictions_ = 0;
  bool flushed_ = false;
  mutable std::mutex mutex_;
  std::string store_problem_;
};

}  // namespace fuserc
