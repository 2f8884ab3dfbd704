#include "codegen/remote_cache/http_cache_backend.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <mutex>
#include <string_view>
#include <vector>

#include "core/base/diagnostics.h"

namespace fuserc {
namespace {

// No NVRTC result comes near this; a larger answer is not a cache entry (and with 8 requests
// at a time, a hostile server can make fuserc hold at most 8 of them).
constexpr curl_off_t kMaxEntryBytes = curl_off_t(64) << 20;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    // With CURLOPT_NOSIGNAL, a connection the server resets mid-upload raises SIGPIPE, which
    // the application must ignore (libcurl's documentation); fuserc's pipes handle EPIPE.
    std::signal(SIGPIPE, SIG_IGN);
  });
}

// One request: the handle, what came back, what goes up, and how it ended.
struct Request {
  size_t index = 0;             // into the batch
  CURL* easy = nullptr;
  std::string body;             // the answer (GET)
  std::string_view upload;      // what a PUT sends
  size_t uploaded = 0;
  bool too_large = false;
  char error[CURL_ERROR_SIZE] = {0};
  explicit Request(size_t i) : index(i), easy(curl_easy_init()) {}
  ~Request() {
    if (easy) curl_easy_cleanup(easy);
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
};

size_t on_data(char* data, size_t size, size_t count, void* user) noexcept {
  auto* r = static_cast<Request*>(user);
  const size_t n = size * count;
  if (r->body.size() + n > static_cast<size_t>(kMaxEntryBytes)) {
    r->too_large = true;
    return 0;  // aborts the transfer
  }
  try {
    r->body.append(data, n);
  } catch (...) {
    return 0;  // out of memory: the transfer fails, the kernel compiles locally
  }
  return n;
}

size_t on_upload(char* buffer, size_t size, size_t count, void* user) noexcept {
  auto* r = static_cast<Request*>(user);
  const size_t n = std::min(size * count, r->upload.size() - r->uploaded);
  std::copy_n(r->upload.data() + r->uploaded, n, buffer);
  r->uploaded += n;
  return n;
}

// curl rewinds an upload to send it again (a reused connection the server had closed).
int on_seek(void* user, curl_off_t offset, int origin) noexcept {
  auto* r = static_cast<Request*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<size_t>(offset) > r->upload.size())
    return CURL_SEEKFUNC_CANTSEEK;
  r->uploaded = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

using Clock = std::chrono::steady_clock;
// A batch (every key of a compile) may take this many --cache-timeout periods in all; a server
// slower than that is given up on like one that does not answer.
constexpr int kBatchTimeouts = 3;

// How one request ended.
enum class Outcome {
  ok,            // 200/201/204
  not_found,     // 404 on a GET
  refused,       // a PUT the server refused for this entry alone (413 too large, 409, ...)
  needs_folder,  // 409 on a PUT: a WebDAV server without the folder (MKCOL, then again)
  failed,        // no answer, a timeout, 5xx, 401/403: the server as a whole
  not_run,       // not started, or stopped when another request failed
};

class HttpCacheBackend final : public CacheBackend {
 public:
  explicit HttpCacheBackend(HttpCacheOptions o) : o_(std::move(o)) {
    global_init();
    while (!o_.url.empty() && o_.url.back() == '/') o_.url.pop_back();
    if (!o_.bearer_token.empty())
      headers_ = curl_slist_append(headers_, ("Authorization: Bearer " + o_.bearer_token).c_str());
    headers_ = curl_slist_append(headers_, "Expect:");  // no 100-continue round trip on PUT
    multi_ = curl_multi_init();
    if (!multi_) throw InternalError("curl_multi_init failed");
  }
  ~HttpCacheBackend() override {
    if (multi_) curl_multi_cleanup(multi_);
    curl_slist_free_all(headers_);
  }

  std::string describe() const override { return url_for_messages(o_.url); }
  bool given_up() const override { return given_up_; }
  void give_up_quietly() override { given_up_ = true; }

  std::vector<CacheFetch> fetch(const std::vector<std::string>& keys) override {
    std::vector<CacheFetch> out(keys.size());
    if (given_up_) return out;  // skipped
    std::vector<Outcome> outcome(keys.size(), Outcome::not_run);
    std::vector<std::string> bodies(keys.size());
    auto prepare = [&](Request& r) {
      set_common(r, keys[r.index]);
      curl_easy_setopt(r.easy, CURLOPT_HTTPGET, 1L);
    };
    auto take = [&](Request& r) { bodies[r.index] = std::move(r.body); };
    run_with_retry(keys.size(), prepare, take, /*is_put=*/false, outcome);
    for (size_t i = 0; i < keys.size(); ++i) {
      switch (outcome[i]) {
        case Outcome::ok:
          out[i].status = CacheStatus::ok;
          out[i].bytes = std::move(bodies[i]);
          break;
        case Outcome::not_found: out[i].status = CacheStatus::not_found; break;
        case Outcome::failed:
        case Outcome::refused:
        case Outcome::needs_folder: out[i].status = CacheStatus::failed; break;
        case Outcome::not_run: out[i].status = CacheStatus::skipped; break;
      }
    }
    return out;
  }

  std::vector<CacheStatus> store(
      const std::vector<std::pair<std::string, std::string>>& entries) override {
    std::vector<CacheStatus> out(entries.size(), CacheStatus::skipped);
    if (given_up_) return out;
    std::vector<Outcome> outcome(entries.size(), Outcome::not_run);
    // Request r uploads entry `e` (r.index counts the requests of one run).
    auto prepare_entry = [&](Request& r, size_t e) {
      const auto& [key, bytes] = entries[e];
      set_common(r, key);
      r.upload = bytes;
      r.uploaded = 0;
      curl_easy_setopt(r.easy, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(r.easy, CURLOPT_READFUNCTION, on_upload);
      curl_easy_setopt(r.easy, CURLOPT_READDATA, &r);
      curl_easy_setopt(r.easy, CURLOPT_SEEKFUNCTION, on_seek);
      curl_easy_setopt(r.easy, CURLOPT_SEEKDATA, &r);
      curl_easy_setopt(r.easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(bytes.size()));
    };
    auto prepare = [&](Request& r) { prepare_entry(r, r.index); };
    auto take = [](Request&) {};
    run_with_retry(entries.size(), prepare, take, /*is_put=*/true, outcome);
    // A WebDAV server that does not create folders on PUT (409): make URL/ and URL/ac/ once,
    // then send those entries again.
    std::vector<size_t> again;
    for (size_t i = 0; i < entries.size(); ++i)
      if (outcome[i] == Outcome::needs_folder) again.push_back(i);
    if (!again.empty() && !given_up_ && make_folders()) {
      std::vector<Outcome> second(again.size(), Outcome::not_run);
      auto prepare_again = [&](Request& r) { prepare_entry(r, again[r.index]); };
      run_with_retry(again.size(), prepare_again, take, /*is_put=*/true, second);
      for (size_t j = 0; j < again.size(); ++j) outcome[again[j]] = second[j];
    }
    for (size_t i = 0; i < entries.size(); ++i) {
      switch (outcome[i]) {
        case Outcome::ok: out[i] = CacheStatus::ok; break;
        case Outcome::not_run: out[i] = CacheStatus::skipped; break;
        default: out[i] = CacheStatus::failed; break;
      }
    }
    return out;
  }

 private:
  std::string entry_url(const std::string& key) const { return o_.url + "/ac/" + key + key; }

  void set_common(Request& r, const std::string& key) {
    curl_easy_setopt(r.easy, CURLOPT_URL, entry_url(key).c_str());
    curl_easy_setopt(r.easy, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(r.easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(r.easy, CURLOPT_NOSIGNAL, 1L);  // threads; timeouts without SIGALRM
    const long ms = std::max(1L, static_cast<long>(o_.timeout_seconds * 1000));
    curl_easy_setopt(r.easy, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(r.easy, CURLOPT_CONNECTTIMEOUT_MS, ms);
    curl_easy_setopt(r.easy, CURLOPT_ERRORBUFFER, r.error);
    curl_easy_setopt(r.easy, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(r.easy, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(r.easy, CURLOPT_MAXFILESIZE_LARGE, kMaxEntryBytes);
    curl_easy_setopt(r.easy, CURLOPT_FOLLOWLOCATION, 0L);  // the token goes nowhere else
    curl_easy_setopt(r.easy, CURLOPT_USERAGENT, "fuserc");
    curl_easy_setopt(r.easy, CURLOPT_PRIVATE, &r);
  }

  static Outcome classify(const Request& r, CURLcode rc, bool is_put, std::string& problem) {
    long status = 0;
    curl_easy_getinfo(r.easy, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_OK && (status == 200 || (is_put && (status == 201 || status == 204))))
      return Outcome::ok;
    if (rc == CURLE_OK && !is_put && status == 404) return Outcome::not_found;
    if (rc == CURLE_FILESIZE_EXCEEDED || r.too_large) {
      problem = "an answer larger than 64 MiB";
      return Outcome::refused;  // that entry alone: damaged, compiled locally
    }
    if (rc != CURLE_OK) {
      problem = r.error[0] ? std::string(r.error) : std::string(curl_easy_strerror(rc));
      return Outcome::failed;
    }
    problem = (is_put ? "PUT answered HTTP " : "GET answered HTTP ") + std::to_string(status);
    if (is_put && status == 409) return Outcome::needs_folder;
    // A request the server refuses for what it is (an entry over its size limit, say), not a
    // server that is down or refuses fuserc as a whole.
    if (status >= 400 && status < 500 && status != 401 && status != 403 && status != 407 &&
        status != 408 && status != 429)
      return Outcome::refused;
    return Outcome::failed;
  }

  // Runs the requests of `count` items (`prepare` sets one up), `o_.parallel` at a time. The
  // first one that fails stops the batch: nothing more is started and those in flight are
  // abandoned (not_run), so that a dead server costs one timeout, not one per key.
  template <class Prepare, class Take>
  void run_batch(const std::vector<size_t>& items, Prepare& prepare, Take& take, bool is_put,
                 std::vector<Outcome>& outcome, std::string& problem) {
    std::vector<std::unique_ptr<Request>> running;
    size_t next = 0;
    bool stop = false;
    const size_t parallel = static_cast<size_t>(std::max(1, o_.parallel));
    auto finish = [&](Request* r) {
      curl_multi_remove_handle(multi_, r->easy);
      running.erase(std::find_if(running.begin(), running.end(),
                                 [r](const auto& p) { return p.get() == r; }));
    };
    while (true) {
      while (!stop && next < items.size() && running.size() < parallel) {
        auto r = std::make_unique<Request>(items[next++]);
        if (!r->easy) {
          problem = "curl_easy_init failed";
          outcome[r->index] = Outcome::failed;
          stop = true;
          break;
        }
        prepare(*r);
        if (curl_multi_add_handle(multi_, r->easy) != CURLM_OK) {
          problem = "curl_multi_add_handle failed";
          outcome[r->index] = Outcome::failed;
          stop = true;
          break;
        }
        running.push_back(std::move(r));
      }
      if (running.empty()) break;
      int still = 0;
      if (curl_multi_perform(multi_, &still) != CURLM_OK) {
        problem = "curl_multi_perform failed";
        stop = true;
        break;
      }
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        Request* r = nullptr;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&r));
        const CURLcode rc = m->data.result;
        const Outcome got = classify(*r, rc, is_put, problem);
        outcome[r->index] = got;
        if (got == Outcome::ok) take(*r);
        if (got == Outcome::failed) stop = true;
        finish(r);
      }
      if (stop) break;
      if (Clock::now() > deadline_) {  // slow but under the timeout, many times over
        problem = "slower than " + std::to_string(kBatchTimeouts) +
                  " timeouts for one batch of requests";
        too_slow_ = true;
        break;
      }
      if (!running.empty() && still > 0) curl_multi_poll(multi_, nullptr, 0, 100, nullptr);
    }
    for (auto& r : running) curl_multi_remove_handle(multi_, r->easy);  // abandoned: not_run
  }

  // Runs every item; when the batch fails, tries the first failed item alone once more: if it
  // fails again the server is given up on, else the rest run again (and a second failure
  // gives up). Items never run stay not_run.
  template <class Prepare, class Take>
  void run_with_retry(size_t count, Prepare& prepare, Take& take, bool is_put,
                      std::vector<Outcome>& outcome) {
    std::string problem;
    deadline_ = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(
                                   o_.timeout_seconds * 1000 * kBatchTimeouts));
    std::vector<size_t> items(count);
    for (size_t i = 0; i < count; ++i) items[i] = i;
    run_batch(items, prepare, take, is_put, outcome, problem);
    if (too_slow_) return give_up(problem);
    std::vector<size_t> unresolved;
    for (size_t i = 0; i < count; ++i)
      if (outcome[i] == Outcome::failed || outcome[i] == Outcome::not_run) unresolved.push_back(i);
    const bool batch_failed =
        std::any_of(outcome.begin(), outcome.end(), [](Outcome o) { return o == Outcome::failed; });
    if (!batch_failed) return;
    for (size_t i : unresolved) outcome[i] = Outcome::not_run;
    std::vector<size_t> probe = {unresolved.front()};
    run_batch(probe, prepare, take, is_put, outcome, problem);
    if (too_slow_ || outcome[probe.front()] == Outcome::failed) return give_up(problem);
    std::vector<size_t> rest(unresolved.begin() + 1, unresolved.end());
    run_batch(rest, prepare, take, is_put, outcome, problem);
    if (too_slow_ || std::any_of(rest.begin(), rest.end(),
                    [&](size_t i) { return outcome[i] == Outcome::failed; }))
      give_up(problem);
  }

  // Makes URL/ and URL/ac/ with WebDAV's MKCOL (once per process); true when the second
  // exists afterwards (201 made, 405 already there).
  bool make_folders() {
    if (made_folders_) return false;
    made_folders_ = true;
    bool ok = true;
    for (const std::string& url : {o_.url + "/", o_.url + "/ac/"}) {
      Request r(0);
      if (!r.easy) return false;
      set_common(r, std::string(32, '0'));
      curl_easy_setopt(r.easy, CURLOPT_URL, url.c_str());
      curl_easy_setopt(r.easy, CURLOPT_CUSTOMREQUEST, "MKCOL");
      const CURLcode rc = curl_easy_perform(r.easy);
      long status = 0;
      curl_easy_getinfo(r.easy, CURLINFO_RESPONSE_CODE, &status);
      ok = rc == CURLE_OK && (status == 201 || status == 405 || status == 200);
    }
    return ok;
  }

  void give_up(const std::string& problem) {
    if (given_up_) return;
    given_up_ = true;
    const std::string message = "remote cache " + describe() + " is not usable (" + problem +
                                ", after a retry); compiling locally without it";
    if (o_.warn)
      o_.warn(message);
    else
      std::cerr << "fuserc: warning: " << message << "\n";
  }

  HttpCacheOptions o_;
  curl_slist* headers_ = nullptr;
  CURLM* multi_ = nullptr;
  bool given_up_ = false;
  bool made_folders_ = false;
  bool too_slow_ = false;
  Clock::time_point deadline_{};
};

}  // namespace

std::string url_for_messages(const std::string& url) {
  // A user name and password end at an '@'; a password may hold '/', '?' or '#' unencoded, so
  // everything from the scheme (or the start) to the last '@' goes. (An '@' in a path costs
  // only a shorter message.)
  const size_t scheme = url.find("://");
  const size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t at = url.rfind('@');
  if (at == std::string::npos || at < host) return url;
  return url.substr(0, host) + url.substr(at + 1);
}

std::unique_ptr<CacheBackend> make_http_cache_backend(HttpCacheOptions options) {
  const std::string& u = options.url;
  if (u.rfind("http://", 0) != 0 && u.rfind("https://", 0) != 0)
    throw UsageError("--cache-url: " + quote(url_for_messages(u)) +
                     " is not an http:// or https:// URL");
  if (u.find_first_of(" \t\r\n?#") != std::string::npos)
    throw UsageError("--cache-url: " + quote(url_for_messages(u)) +
                     " has white space, a query ('?') or a fragment ('#') in it");
  if (options.bearer_token.find_first_of("\r\n") != std::string::npos)
    throw UsageError("FUSERC_CACHE_TOKEN has a line break in it");
  if (!(options.timeout_seconds > 0)) throw UsageError("--cache-timeout must be positive");
  return std::make_unique<HttpCacheBackend>(std::move(options));
}

}  // namespace fuserc
