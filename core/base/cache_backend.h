// Owns the interface of a second cache level behind DiskCache: a store of cache entries shared
// by many machines, such as an HTTP cache server. The compiler's implementation is
// codegen/remote_cache/http_cache_backend.h (libcurl); core/base and the runtime know nothing of
// HTTP. Entries travel in DiskCache's own self-checking file format (header with the key, the
// size and a hash of the value), so the disk cache verifies every entry that comes back.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fuserc {

struct CacheFetch {
  enum class Status {
    found,      // `bytes` is what the store holds under the key (not yet verified)
    not_found,  // the store answered that it has no such entry
    failed,     // the request failed (after its retry): counted as an error
    skipped,    // not asked: the store was given up on earlier in this process
  };
  Status status = Status::skipped;
  std::string bytes;
};

class CacheBackend {
 public:
  virtual ~CacheBackend() = default;

  // Where the store is, for messages: never a credential.
  virtual std::string describe() const = 0;

  // Asks for the entries of `keys` (32 lowercase hex digits each), concurrently where it can;
  // one result per key, in the same order. Never throws. A store that fails gives up on itself
  // for the rest of the process, warning once, so that the caller compiles locally.
  virtual std::vector<CacheFetch> fetch(const std::vector<std::string>& keys) = 0;

  // Stores an entry's bytes under `key`; false when it could not (or was not asked to, after
  // giving up). Never throws.
  virtual bool store(const std::string& key, std::string_view bytes) = 0;
};

}  // namespace fuserc
