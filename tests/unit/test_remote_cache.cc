// Tests of the disk cache with a backend behind it (core/base/cache_backend.h), using an
// in-memory backend: prefetch asks only for what is not on disk and writes what comes back,
// a damaged remote entry is ignored and counted, a local store goes to the backend unless
// read-only, bookkeeping entries never travel, a failed backend is not asked again for the
// same key, and the remote counters reach the shared stats. Also the HTTP backend's argument
// checks and URL redaction (the real server is tested by tests/remote_cache/).
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "codegen/remote_cache/http_cache_backend.h"
#include "core/base/content_hash.h"
#include "core/base/diagnostics.h"
#include "core/base/disk_cache.h"
#include "core/base/file_io.h"
#include "temp_dir.h"

using namespace fuserc;
using fuserc::testing::TempDir;

namespace {

struct FakeServer {
  std::map<std::string, std::string> entries;
  std::vector<std::string> asked;  // every key fetched, in order
  int stores = 0;
  bool down = false;
};

class FakeBackend : public CacheBackend {
 public:
  explicit FakeBackend(FakeServer& s) : s_(s) {}
  std::string describe() const override { return "fake"; }
  std::vector<CacheFetch> fetch(const std::vector<std::string>& keys) override {
    std::vector<CacheFetch> out(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      s_.asked.push_back(keys[i]);
      if (s_.down) {
        out[i].status = CacheFetch::Status::failed;
      } else if (auto it = s_.entries.find(keys[i]); it != s_.entries.end()) {
        out[i].status = CacheFetch::Status::found;
        out[i].bytes = it->second;
      } else {
        out[i].status = CacheFetch::Status::not_found;
      }
    }
    return out;
  }
  bool store(const std::string& key, std::string_view bytes) override {
    if (s_.down) return false;
    s_.entries[key] = std::string(bytes);
    ++s_.stores;
    return true;
  }

 private:
  FakeServer& s_;
};

std::unique_ptr<DiskCache> cache_with(const std::string& dir, FakeServer& s, bool ro = false) {
  auto c = std::make_unique<DiskCache>(dir, 0);
  c->set_backend(std::make_unique<FakeBackend>(s), ro);
  return c;
}

}  // namespace

TEST_CASE("remote cache: a second machine gets every entry from the first one's stores",
          "[disk_cache][remote_cache]") {
  TempDir tmp;
  FakeServer server;
  const std::string a = content_hash_hex("a"), b = content_hash_hex("b");
  {
    auto first = cache_with(tmp / "m1", server);
    first->prefetch({a, b});
    CHECK(server.asked.size() == 2);
    CHECK_FALSE(first->get(a));  // asked already by prefetch: not asked again
    CHECK(server.asked.size() == 2);
    first->put(a, "value a");
    first->put(b, "value b");
    first->put(content_hash_hex("machine"), "local only", /*counted=*/false);
    CHECK(server.stores == 2);
    DiskCacheCounters c = first->local_counters();
    CHECK(c.remote_not_found == 2);
    CHECK(c.remote_stored == 2);
    CHECK(c.remote_bytes_stored > 14);
  }
  server.asked.clear();
  auto second = cache_with(tmp / "m2", server);
  second->prefetch({a, b, a});
  CHECK(server.asked.size() == 2);  // each key once
  CHECK(second->get(a) == std::optional<std::string>("value a"));
  CHECK(second->get(b) == std::optional<std::string>("value b"));
  CHECK(server.asked.size() == 2);  // served from the folder
  DiskCacheCounters c = second->local_counters();
  CHECK(c.remote_fetched == 2);
  CHECK(c.stores == 0);  // nothing was compiled
  CHECK(c.hits == 2);
  CHECK(server.stores == 2);  // a fetched entry is not stored back
  second->flush();
  CHECK(second->stats().counters.remote_fetched == 2);  // in the shared counters
}

TEST_CASE("remote cache: get() without prefetch asks for the one key; local hits ask nothing",
          "[disk_cache][remote_cache]") {
  TempDir tmp;
  FakeServer server;
  const std::string k = content_hash_hex("k");
  auto c = cache_with(tmp / "m", server);
  c->put(k, "here");
  server.entries.clear();
  CHECK(c->get(k) == std::optional<std::string>("here"));
  CHECK(server.asked.empty());
  const std::string other = content_hash_hex("other");
  {
    FakeServer s2;
    auto src = cache_with(tmp / "src", s2);
    src->put(other, "from afar");
    server.entries[other] = s2.entries[other];
  }
  CHECK(c->get(other) == std::optional<std::string>("from afar"));
  CHECK(server.asked == std::vector<std::string>{other});
}

TEST_CASE("remote cache: an altered or truncated entry is ignored, counted and replaced",
          "[disk_cache][remote_cache]") {
  TempDir tmp;
  FakeServer server;
  const std::string a = content_hash_hex("a"), b = content_hash_hex("b");
  {
    auto first = cache_with(tmp / "m1", server);
    first->put(a, "the value of a, long enough to alter");
    first->put(b, "the value of b");
  }
  server.entries[a].back() ^= 1;                                       // altered
  server.entries[b].resize(server.entries[b].size() / 2);              // truncated
  server.entries[content_hash_hex("c")] = "";                          // empty
  auto second = cache_with(tmp / "m2", server);
  second->prefetch({a, b, content_hash_hex("c")});
  CHECK_FALSE(second->get(a));
  CHECK_FALSE(second->get(b));
  DiskCacheCounters c = second->local_counters();
  CHECK(c.remote_damaged == 3);
  CHECK(c.remote_fetched == 0);
  second->put(a, "the value of a, long enough to alter");  // compiled again: overwrites
  auto third = cache_with(tmp / "m3", server);
  CHECK(third->get(a) == std::optional<std::string>("the value of a, long enough to alter"));
}

TEST_CASE("remote cache: read-only never stores; a failing backend costs one error per key",
          "[disk_cache][remote_cache]") {
  TempDir tmp;
  FakeServer server;
  const std::string a = content_hash_hex("a");
  auto ro = cache_with(tmp / "ro", server, /*ro=*/true);
  ro->put(a, "v");
  CHECK(server.stores == 0);
  CHECK(ro->get(a) == std::optional<std::string>("v"));  // the local cache still works
  server.down = true;
  auto c = cache_with(tmp / "down", server);
  CHECK_FALSE(c->get(a));
  CHECK_FALSE(c->get(a));
  c->put(a, "v");
  CHECK(c->get(a) == std::optional<std::string>("v"));
  DiskCacheCounters n = c->local_counters();
  CHECK(n.remote_errors == 1);
  CHECK(n.remote_stored == 0);
}

TEST_CASE("remote cache: HTTP backend refuses bad URLs and tokens; messages hide credentials",
          "[remote_cache]") {
  CHECK(url_for_messages("https://user:pw@cache.example:8080/x/y") ==
        "https://cache.example:8080/x/y");
  CHECK(url_for_messages("http://cache/p@q") == "http://cache/p@q");
  CHECK(url_for_messages("http://h") == "http://h");
  HttpCacheOptions o;
  o.url = "ftp://user:secret@host/x";
  try {
    make_http_cache_backend(o);
    FAIL("accepted an ftp URL");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("secret") == std::string::npos);
    CHECK(std::string(e.what()).find("ftp://host/x") != std::string::npos);
  }
  o.url = "http://127.0.0.1:1/x";
  o.bearer_token = "abc\r\nX-Evil: 1";
  CHECK_THROWS_AS(make_http_cache_backend(o), UsageError);
  o.bearer_token = "abc";
  auto b = make_http_cache_backend(o);
  CHECK(b->describe() == "http://127.0.0.1:1/x");
}

TEST_CASE("remote cache: an HTTP server that refuses connections is given up on with one warning",
          "[remote_cache]") {
  HttpCacheOptions o;
  o.url = "http://127.0.0.1:9/fuserc/";  // the discard port: nothing listens on loopback
  o.timeout_seconds = 2;
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto b = make_http_cache_backend(o);
  const std::string k = content_hash_hex("k");
  std::vector<CacheFetch> got = b->fetch({k, k});
  REQUIRE(got.size() == 2);
  CHECK(got[0].status == CacheFetch::Status::failed);
  CHECK_FALSE(b->store(k, "x"));  // given up: not tried
  CHECK(b->fetch({k})[0].status == CacheFetch::Status::skipped);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("http://127.0.0.1:9/fuserc") != std::string::npos);
}
