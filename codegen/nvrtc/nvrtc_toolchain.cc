#include "codegen/nvrtc/nvrtc_toolchain.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <mutex>
#include <optional>
#include <sstream>

#include "codegen/nvrtc/nvrtc_library.h"
#include "core/base/content_hash.h"
#include "core/base/disk_cache.h"
#include "core/base/file_io.h"

namespace fuserc {
namespace {

// The file the loaded NVRTC came from.
std::string loaded_library_file() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(nvrtc().version), &info) != 0 && info.dli_fname)
    return info.dli_fname;
  return nvrtc_library_file();
}

std::string file_identity(const std::string& file) {
  return file.empty() ? std::string("unknown") : content_hash_hex(read_file(file));
}

NvrtcToolchain ask_nvrtc() {
  const NvrtcApi& api = nvrtc();
  NvrtcToolchain t;
  int major = 0, minor = 0;
  api.version(&major, &minor);
  t.version = std::to_string(major) + "." + std::to_string(minor);
  int count = 0;
  api.get_num_supported_archs(&count);
  t.supported_archs.resize(static_cast<size_t>(std::max(count, 0)));
  if (count > 0) api.get_supported_archs(t.supported_archs.data());
  return t;
}

std::string encode(const NvrtcToolchain& t) {
  std::string s = "version " + t.version + "\nidentity " + t.identity + "\narchs";
  for (int a : t.supported_archs) s += " " + std::to_string(a);
  return s + "\n";
}

std::optional<NvrtcToolchain> decode(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  NvrtcToolchain t;
  if (!(in >> word) || word != "version" || !(in >> t.version)) return std::nullopt;
  if (!(in >> word) || word != "identity" || !(in >> t.identity)) return std::nullopt;
  if (!(in >> word) || word != "archs") return std::nullopt;
  for (int a; in >> a;) t.supported_archs.push_back(a);
  if (t.supported_archs.empty()) return std::nullopt;
  return t;
}

// The cache key of the description of `file`, from what stat says of it; "" if it cannot.
std::string stat_key(const std::string& file) {
  struct stat st;
  if (file.empty() || ::stat(file.c_str(), &st) != 0) return "";
  std::string key = "fuserc-nvrtc-toolchain-v1";
  for (const std::string& part :
       {file, std::to_string(st.st_dev), std::to_string(st.st_ino), std::to_string(st.st_size),
        std::to_string(st.st_mtim.tv_sec), std::to_string(st.st_mtim.tv_nsec)})
    key += '\0' + part;
  return content_hash_hex(key);
}

NvrtcToolchain describe(DiskCache* cache) {
  if (cache == nullptr) return ask_nvrtc();
  const std::string key = stat_key(nvrtc_library_file());
  if (!key.empty()) {
    if (auto stored = cache->get(key, false))
      if (auto t = decode(*stored)) return *t;
  }
  NvrtcToolchain t = ask_nvrtc();
  t.identity = file_identity(loaded_library_file());
  if (!key.empty()) cache->put(key, encode(t), false);
  return t;
}

}  // namespace

const NvrtcToolchain& nvrtc_toolchain(DiskCache* cache) {
  static std::mutex mutex;
  static std::optional<NvrtcToolchain> toolchain;
  std::lock_guard<std::mutex> lock(mutex);
  if (!toolchain) toolchain = describe(cache);
  if (cache != nullptr && toolchain->identity.empty())
    toolchain->identity = file_identity(loaded_library_file());
  return *toolchain;
}

}  // namespace fuserc
