// Tests of the disk cache with a backend behind it (core/base/cache_backend.h), using an
// in-memory backend: prefetch asks only for what is not on disk and writes what comes back,
// a damaged remote entry is ignored and counted, local stores reach the backend at flush()
// unless read-only, bookkeeping entries never travel, a failed backend is not asked again for
// the same key, a backend given up on is skipped by the next process for a minute, and the
// remote counters reach the shared stats. Also the HTTP backend's argument checks, URL
// redaction and a refused connection (the real server is tested by tests/remote_cache/).
#include <catch2/catch.hpp>

#include <algorithm>
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
  bool gave_up = false;  // the last backend's state
};

class FakeBackend : public CacheBackend {
 public:
  explicit FakeBackend(FakeServer& s) : s_(s) {}
  std::string describe() const override { return "fake"; }
  std::vector<CacheFetch> fetch(const std::vector<std::string>& keys) override {
    std::vector<CacheFetch> out(keys.size());
    if (given_up_) return out;
    for (size_t i = 0; i < keys.size(); ++i) {
      s_.asked.push_back(keys[i]);
      if (s_.down) {
        out[i].status = CacheStatus::failed;
        given_up_ = s_.gave_up = true;
        return out;  // the rest skipped
      } else if (auto it = s_.entries.find(keys[i]); it != s_.entries.end()) {
        out[i].status = CacheStatus::ok;
        out[i].bytes = it->second;
      } else {
        out[i].status = CacheStatus::not_found;
      }
    }
    return out;
  }
  std::vector<CacheStatus> store(
      const std::vector<std::pair<std::string, std::string>>& entries) override {
    std::vector<CacheStatus> out(entries.size(), CacheStatus::skipped);
    if (given_up_) return out;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (s_.down) {
        out[i] = CacheStatus::failed;
        given_up_ = s_.gave_up = true;
        return out;
      }
      s_.entries[entries[i].first] = entries[i].second;
      ++s_.stores;
      out[i] = CacheStatus::ok;
    }
    return out;
  }
  bool given_up() const override { return given_up_; }
  void give_up_quietly() override { given_up_ = s_.gave_up = true; }

 private:
  FakeServer& s_;
  bool given_up_ = false;
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
    CHECK(server.stores == 0);  // queued until flush()
    first->flush();
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
  CHECK(c->get(k) == std::optional<std::string>("here"));
  CHECK(server.asked.empty());
  const std::string other = content_hash_hex("other");
  {
    FakeServer s2;
    auto src = cache_with(tmp / "src", s2);
    src->put(other, "from afar");
    src->flush();
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
  }  // flushed
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
  second->flush();
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
  ro->flush();
  CHECK(server.stores == 0);
  CHECK(ro->get(a) == std::optional<std::string>("v"));  // the local cache still works
  server.down = true;
  auto c = cache_with(tmp / "down", server);
  const std::string b = content_hash_hex("b");
  CHECK_FALSE(c->get(a));
  CHECK_FALSE(c->get(a));
  CHECK_FALSE(c->get(b));  // given up: not asked
  CHECK(server.asked.size() == 1);
  c->put(a, "v");
  CHECK(c->get(a) == std::optional<std::string>("v"));
  c->flush();
  DiskCacheCounters n = c->local_counters();
  CHECK(n.remote_errors == 1);
  CHECK(n.remote_stored == 0);
  // The next process on this folder, within the minute, does not wait for the server.
  server.down = false;
  server.gave_up = false;
  auto next = cache_with(tmp / "down", server);
  CHECK(server.gave_up);
  CHECK_FALSE(next->get(b));
  CHECK(server.asked.size() == 1);
  // Another server is asked as usual.
  DiskCache other(tmp / "down", 0);
  struct Named : FakeBackend {
    using FakeBackend::FakeBackend;
    std::string describe() const override { return "another"; }
  };
  server.gave_up = false;
  other.set_backend(std::make_unique<Named>(server), false);
  CHECK_FALSE(server.gave_up);
}

TEST_CASE("remote cache: HTTP backend refuses bad URLs and tokens; messages hide credentials",
          "[remote_cache]") {
  CHECK(url_for_messages("https://user:pw@cache.example:8080/x/y") ==
        "https://cache.example:8080/x/y");
  CHECK(url_for_messages("https://u:p/a?s#w@host/x") == "https://host/x");  // raw '/', '?', '#'
  CHECK(url_for_messages("u:pw@host/x") == "host/x");
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
  o.url = "http://host/x?token=1";
  CHECK_THROWS_AS(make_http_cache_backend(o), UsageError);
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
  std::vector<std::string> keys(20, k);  // more than one batch of 8
  std::vector<CacheFetch> got = b->fetch(keys);
  REQUIRE(got.size() == 20);
  CHECK(std::count_if(got.begin(), got.end(), [](const CacheFetch& f) {
          return f.status == CacheStatus::failed;
        }) >= 1);
  CHECK(b->given_up());
  CHECK(b->store({{k, "x"}})[0] == CacheStatus::skipped);  // given up: not tried
  CHECK(b->fetch({k})[0].status == CacheStatus::skipped);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("http://127.0.0.1:9/fuserc") != std::string::npos);
}
