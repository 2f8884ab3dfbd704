#include "codegen/remote_cache/http_cache_backend.h"

#include <curl/curl.h>

#include <algorithm>
#include <iostream>
#include <mutex>
#include <string_view>
#include <vector>

#include "core/base/diagnostics.h"

namespace fuserc {
namespace {

constexpr size_t kMaxEntryBytes = size_t(1) << 30;  // a larger answer is not a cache entry

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One request's state: the handle, the headers, what came back and what goes up.
struct Request {
  CURL* easy = nullptr;
  std::string body;             // the answer (GET)
  std::string_view upload;      // what a PUT sends
  size_t uploaded = 0;
  bool too_large = false;
  char error[CURL_ERROR_SIZE] = {0};
  ~Request() {
    if (easy) curl_easy_cleanup(easy);
  }
};

size_t on_data(char* data, size_t size, size_t count, void* user) {
  auto* r = static_cast<Request*>(user);
  const size_t n = size * count;
  if (r->body.size() + n > kMaxEntryBytes) {
    r->too_large = true;
    return 0;  // aborts the transfer
  }
  r->body.append(data, n);
  return n;
}

size_t on_upload(char* buffer, size_t size, size_t count, void* user) {
  auto* r = static_cast<Request*>(user);
  const size_t n = std::min(size * count, r->upload.size() - r->uploaded);
  std::copy_n(r->upload.data() + r->uploaded, n, buffer);
  r->uploaded += n;
  return n;
}

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
    put_.reset();
    if (multi_) curl_multi_cleanup(multi_);
    curl_slist_free_all(headers_);
  }

  std::string describe() const override { return url_for_messages(o_.url); }

  std::vector<CacheFetch> fetch(const std::vector<std::string>& keys) override {
    std::vector<CacheFetch> out(keys.size());
    if (given_up_) return out;  // skipped
    std::vector<size_t> todo(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) todo[i] = i;
    std::string problem;
    for (int attempt = 0; attempt < 2 && !todo.empty(); ++attempt) {
      std::vector<size_t> failed;
      run_gets(keys, todo, out, failed, problem);
      todo = std::move(failed);
    }
    if (!todo.empty()) give_up(problem);
    return out;
  }

  bool store(const std::string& key, std::string_view bytes) override {
    if (given_up_) return false;
    std::string problem;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!put_) put_ = std::make_unique<Request>();  // kept: its connection is reused
      Request& r = *put_;
      if (!r.easy) r.easy = curl_easy_init();
      if (!r.easy) {
        problem = "curl_easy_init failed";
        continue;
      }
      curl_easy_reset(r.easy);
      prepare(r, key);
      r.upload = bytes;
      r.uploaded = 0;
      curl_easy_setopt(r.easy, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(r.easy, CURLOPT_READFUNCTION, on_upload);
      curl_easy_setopt(r.easy, CURLOPT_READDATA, &r);
      curl_easy_setopt(r.easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(bytes.size()));
      const CURLcode rc = curl_easy_perform(r.easy);
      long status = 0;
      curl_easy_getinfo(r.easy, CURLINFO_RESPONSE_CODE, &status);
      if (rc == CURLE_OK && (status == 200 || status == 201 || status == 204)) return true;
      problem = rc != CURLE_OK ? transfer_problem(r, rc)
                               : "PUT answered HTTP " + std::to_string(status);
      put_.reset();  // a fresh connection for the retry
    }
    give_up(problem);
    return false;
  }

 private:
  std::string entry_url(const std::string& key) const { return o_.url + "/ac/" + key + key; }

  void prepare(Request& r, const std::string& key) {
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
    curl_easy_setopt(r.easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(r.easy, CURLOPT_USERAGENT, "fuserc");
    r.body.clear();
    r.too_large = false;
    r.error[0] = '\0';
  }

  static std::string transfer_problem(const Request& r, CURLcode rc) {
    if (r.too_large) return "an answer larger than 1 GiB";
    return r.error[0] ? std::string(r.error) : std::string(curl_easy_strerror(rc));
  }

  // GETs keys[i] for each i in `todo`, `parallel` at a time: fills out[i], or adds i to
  // `failed` with the last problem seen.
  void run_gets(const std::vector<std::string>& keys, const std::vector<size_t>& todo,
                std::vector<CacheFetch>& out, std::vector<size_t>& failed, std::string& problem) {
    std::vector<std::unique_ptr<Request>> requests(todo.size());
    size_t next = 0, running = 0;
    auto start_next = [&]() -> bool {
      if (next == todo.size()) return false;
      const size_t t = next++;
      auto r = std::make_unique<Request>();
      r->easy = curl_easy_init();
      if (!r->easy) {
        problem = "curl_easy_init failed";
        failed.push_back(todo[t]);
        return true;
      }
      prepare(*r, keys[todo[t]]);
      curl_easy_setopt(r->easy, CURLOPT_HTTPGET, 1L);
      curl_easy_setopt(r->easy, CURLOPT_PRIVATE, reinterpret_cast<char*>(t));
      curl_multi_add_handle(multi_, r->easy);
      requests[t] = std::move(r);
      ++running;
      return true;
    };
    const size_t parallel = static_cast<size_t>(std::max(1, o_.parallel));
    while (running < parallel && start_next()) {
    }
    while (running > 0) {
      int still = 0;
      if (curl_multi_perform(multi_, &still) != CURLM_OK) break;
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        char* priv = nullptr;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
        const size_t t = reinterpret_cast<size_t>(priv);
        Request& r = *requests[t];
        const size_t i = todo[t];
        long status = 0;
        curl_easy_getinfo(r.easy, CURLINFO_RESPONSE_CODE, &status);
        const CURLcode rc = m->data.result;
        if (rc == CURLE_OK && status == 200) {
          out[i].status = CacheFetch::Status::found;
          out[i].bytes = std::move(r.body);
        } else if (rc == CURLE_OK && status == 404) {
          out[i].status = CacheFetch::Status::not_found;
        } else {
          out[i].status = CacheFetch::Status::failed;
          problem = rc != CURLE_OK ? transfer_problem(r, rc)
                                   : "GET answered HTTP " + std::to_string(status);
          failed.push_back(i);
        }
        curl_multi_remove_handle(multi_, r.easy);
        requests[t].reset();
        --running;
        while (running < parallel && start_next()) {
        }
      }
      if (running > 0) curl_multi_poll(multi_, nullptr, 0, 100, nullptr);
    }
    for (auto& r : requests)  // only after a curl_multi_perform failure
      if (r) {
        curl_multi_remove_handle(multi_, r->easy);
        problem = "curl_multi_perform failed";
      }
    for (size_t t = 0; t < requests.size(); ++t)
      if (requests[t]) {
        out[todo[t]].status = CacheFetch::Status::failed;
        failed.push_back(todo[t]);
      }
  }

  void give_up(const std::string& problem) {
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
  std::unique_ptr<Request> put_;
  bool given_up_ = false;
};

}  // namespace

std::string url_for_messages(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t host = scheme + 3;
  const size_t end = url.find_first_of("/?#", host);
  const size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < host) return url;
  return url.substr(0, host) + url.substr(at + 1);
}

std::unique_ptr<CacheBackend> make_http_cache_backend(HttpCacheOptions options) {
  const std::string& u = options.url;
  if (u.rfind("http://", 0) != 0 && u.rfind("https://", 0) != 0)
    throw UsageError("--cache-url: " + quote(url_for_messages(u)) +
                     " is not an http:// or https:// URL");
  if (u.find_first_of(" \t\r\n") != std::string::npos)
    throw UsageError("--cache-url: the URL has white space in it");
  if (options.bearer_token.find_first_of("\r\n") != std::string::npos)
    throw UsageError("FUSERC_CACHE_TOKEN has a line break in it");
  if (!(options.timeout_seconds > 0)) throw UsageError("--cache-timeout must be positive");
  return std::make_unique<HttpCacheBackend>(std::move(options));
}

}  // namespace fuserc
