#include "codegen/nvrtc/nvrtc_toolchain.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>

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

// The GNU build ID of the loaded object holding `address` (hex), or "".
std::string build_id_of(const void* address) {
  struct Search {
    uintptr_t address;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        auto& s = *static_cast<Search*>(data);
        bool holds = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s.address >= start && s.address < start + ph.p_memsz)
            holds = true;
        }
        if (!holds) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
          const char* end = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) n;
            std::memcpy(&n, p, sizeof n);
            const char* name = p + sizeof n;
            const char* desc = name + ((n.n_namesz + 3) & ~3u);
            if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0 && desc + n.n_descsz <= end) {
              static const char* hex = "0123456789abcdef";
              for (size_t b = 0; b < n.n_descsz; ++b) {
                const auto byte = static_cast<unsigned char>(desc[b]);
                s.id += hex[byte >> 4];
                s.id += hex[byte & 15];
              }
              return 1;
            }
            p = desc + ((n.n_descsz + 3) & ~3u);
          }
        }
        return 1;  // the object holding the address has no build ID
      },
      &search);
  return search.id;
}

// What identifies the loaded NVRTC's code: its build ID (read from memory, so free), else a
// hash of the library file.
std::string loaded_identity() {
  const std::string id = build_id_of(reinterpret_cast<const void*>(nvrtc().version));
  if (!id.empty()) return "build-id-" + id;
  const std::string file = loaded_library_file();
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
  t.identity = loaded_identity();
  if (!key.empty()) cache->put(key, encode(t), false);
  return t;
}

}  // namespace

const NvrtcToolchain& nvrtc_toolchain(DiskCache* cache) {
  static std::mutex mutex;
  static std::optional<NvrtcToolchain> toolchain;
  std::lock_guard<std::mutex> lock(mutex);
  if (!toolchain) toolchain = describe(cache);
  if (cache != nullptr && toolchain->identity.empty()) toolchain->identity = loaded_identity();
  return *toolchain;
}

}  // namespace fuserc
