#include "codegen/nvrtc/nvrtc_cache.h"

#include "core/base/content_hash.h"
#include "fuserc/version.h"

namespace fuserc {
namespace {

// Bump when the value's layout or the meaning of anything in it changes.
constexpr const char* kFormat = "fuserc-nvrtc-result-v1";

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void put_string(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  bool u64(uint64_t& v) {
    if (bytes_.size() - at_ < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i)
      v |= uint64_t(static_cast<unsigned char>(bytes_[at_ + i])) << (8 * i);
    at_ += 8;
    return true;
  }
  bool i32(int& v) {
    uint64_t u;
    if (!u64(u) || u > 0x7fffffff) return false;
    v = static_cast<int>(u);
    return true;
  }
  bool string(std::string& s) {
    uint64_t n;
    if (!u64(n) || n > bytes_.size() - at_) return false;
    s = bytes_.substr(at_, n);
    at_ += n;
    return true;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
};

}  // namespace

std::string nvrtc_cache_key(const std::string& source, const std::string& file_name,
                            const std::vector<std::string>& options,
                            const std::string& nvrtc_version, const std::string& nvrtc_identity) {
  std::string key;
  auto add = [&](const std::string& part) { put_string(key, part); };
  add(kFormat);
  add(FUSERC_VERSION_STRING);
  add(nvrtc_version);
  add(nvrtc_identity);
  put_u64(key, options.size());
  for (const auto& o : options) add(o);
  add(file_name);
  add(source);
  return content_hash_hex(key);
}

std::string encode_nvrtc_result(const NvrtcOutput& r) {
  std::string out;
  put_string(out, kFormat);
  const ArchBinary& b = r.binary;
  for (int v : {b.arch, b.registers, b.spill_store_bytes, b.spill_load_bytes, b.shared_bytes,
                b.local_bytes})
    put_u64(out, static_cast<uint64_t>(v));
  put_string(out, b.cubin);
  put_u64(out, r.has_ptx ? 1 : 0);
  if (r.has_ptx) put_string(out, r.ptx);
  return out;
}

std::optional<NvrtcOutput> decode_nvrtc_result(const std::string& bytes) {
  Reader in(bytes);
  NvrtcOutput r;
  ArchBinary& b = r.binary;
  std::string format;
  uint64_t has_ptx = 0;
  if (!in.string(format) || format != kFormat) return std::nullopt;
  for (int* v : {&b.arch, &b.registers, &b.spill_store_bytes, &b.spill_load_bytes, &b.shared_bytes,
                 &b.local_bytes})
    if (!in.i32(*v)) return std::nullopt;
  if (!in.string(b.cubin) || !in.u64(has_ptx) || has_ptx > 1) return std::nullopt;
  r.has_ptx = has_ptx == 1;
  if (r.has_ptx && !in.string(r.ptx)) return std::nullopt;
  if (!in.done()) return std::nullopt;
  return r;
}

}  // namespace fuserc
