// Owns the interface of a second cache level behind DiskCache: a store of cache entries shared
// by many machines, such as an HTTP cache server. The compiler's implementation is
// codegen/remote_cache/http_cache_backend.h (libcurl); core/base and the runtime know nothing of
// HTTP. Entries travel in DiskCache's own self-checking file format (header with the key, the
// size and a hash of the value), so the disk cache verifies every entry that comes back.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fuserc {

enum class CacheStatus {
  ok,         // fetched (the bytes are not yet verified) or stored
  not_found,  // the store answered that it has no such entry
  failed,     // the request failed, after its retry: counted as an error
  skipped,    // not asked: the store was given up on (in this process or, recently, another)
};

struct CacheFetch {
  CacheStatus status = CacheStatus::skipped;
  std::string bytes;
};

class CacheBackend {
 public:
  virtual ~CacheBackend() = default;

  // Where the store is, for messages: never a credential.
  virtual std::string describe() const = 0;

  // Asks for the entries of `keys` (32 lowercase hex digits each), concurrently; one result per
  // key, in the same order. Never throws. A store that fails (after one retry) is given up on
  // for the rest of the process with one warning, so that the caller compiles locally; the
  // time this takes does not grow with the number of keys.
  virtual std::vector<CacheFetch> fetch(const std::vector<std::string>& keys) = 0;

  // Stores entries (key, bytes), concurrently; one status per entry. Never throws. An entry
  // the store refuses on its own (too large, say) fails alone; a store that fails as a whole
  // is given up on as for fetch.
  virtual std::vector<CacheStatus> store(
      const std::vector<std::pair<std::string, std::string>>& entries) = 0;

  // Whether the store was given up on; give_up_quietly() does so without the warning (another
  // process gave up on it moments ago and warned).
  virtual bool given_up() const = 0;
  virtual void give_up_quietly() = 0;
};

}  // namespace fuserc
