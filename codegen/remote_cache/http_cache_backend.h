// Owns the remote compile cache on an HTTP cache server (libcurl; the compiler links it, the
// runtime library does not). Entries are fetched with GET and stored with PUT over HTTP/1.1 at
//
//   URL/ac/<key><key>     the 32-hex-digit key written twice: 64 hex digits, the form of a
//                         SHA-256, as bazel-remote's HTTP API wants (ccache's "bazel" layout)
//
// which bazel-remote (with --disable_http_ac_validation), nginx with WebDAV PUT and any store
// that maps paths to objects serve alike. A request that fails (no connection, a timeout, an
// HTTP status other than 200/201/204, or 404 for a GET) is tried once more; if it fails again
// the server is given up on for the rest of the process with one warning, and everything is
// compiled locally. The server is never trusted: DiskCache checks every entry it returns.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/base/cache_backend.h"

namespace fuserc {

struct HttpCacheOptions {
  std::string url;           // http:// or https://, with an optional path prefix
  std::string bearer_token;  // sent as "Authorization: Bearer ..." when not empty; never shown
  double timeout_seconds = 10;  // per request, connecting included
  int parallel = 8;             // concurrent GETs in a fetch
  // Where the one warning goes (default: a line on stderr).
  std::function<void(const std::string&)> warn;
};

// Throws UsageError for a URL that is not http(s):// or a token with a line break in it.
std::unique_ptr<CacheBackend> make_http_cache_backend(HttpCacheOptions options);

// `url` without a user name or password in it ("https://user:pw@host/x" -> "https://host/x").
std::string url_for_messages(const std::string& url);

}  // namespace fuserc
