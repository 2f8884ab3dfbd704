#include "core/base/safetensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "core/base/json_reader.h"

namespace fuserc {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr const char* kMetadataKey = "__metadata__";

// One tensor entry of a header, validated on its own.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin;
  uint64_t end;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& file, uint64_t data_size) : file_(file), data_size_(data_size) {}

  std::vector<Entry> parse(const nlohmann::json& root) {
    if (!root.is_object()) fail("header is not a JSON object");
    std::vector<Entry> entries;
    for (const auto& [name, value] : root.items()) {
      if (name == kMetadataKey) {
        check_metadata(value);
      } else {
        entries.push_back(parse_entry(name, value));
      }
    }
    check_coverage(entries);
    return entries;
  }

 private:
  const std::string& file_;
  uint64_t data_size_;

  [[noreturn]] void fail(const std::string& message) const {
    throw UserError(SourcePlace{file_}, message);
  }
  [[noreturn]] void fail(const std::string& name, const std::string& message) const {
    fail("tensor " + quote(name) + ": " + message);
  }

  void check_metadata(const nlohmann::json& value) const {
    if (!value.is_object()) fail("__metadata__ is not an object of strings");
    for (const auto& [key, v] : value.items()) {
      if (!v.is_string()) {
        fail("__metadata__ is not an object of strings (the value of " + quote(key) +
             " is not a string)");
      }
    }
  }

  static std::optional<uint64_t> non_negative_integer(const nlohmann::json& v) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0)
      return static_cast<uint64_t>(v.get<int64_t>());
    return std::nullopt;
  }

  Entry parse_entry(const std::string& name, const nlohmann::json& value) const {
    if (!value.is_object()) fail(name, "entry is not an object");
    for (const auto& [key, v] : value.items()) {
      if (key != "dtype" && key != "shape" && key != "data_offsets")
        fail(name, "unknown key " + quote(key) + " (expected dtype, shape and data_offsets)");
    }
    for (const char* key : {"dtype", "shape", "data_offsets"}) {
      if (!value.contains(key)) fail(name, std::string("missing key '") + key + "'");
    }
    Entry e{name, DType::F32, {}, 0, 0};
    e.dtype = parse_entry_dtype(name, value["dtype"]);
    e.shape = parse_shape(name, value["shape"]);
    parse_offsets(name, value["data_offsets"], e);
    check_size(e);
    return e;
  }

  DType parse_entry_dtype(const std::string& name, const nlohmann::json& v) const {
    if (!v.is_string()) fail(name, "dtype is not a string");
    const auto& text = v.get_ref<const std::string&>();
    auto dtype = parse_safetensors_dtype(text);
    if (!dtype) {
      fail(name, "unknown dtype " + quote(text) + " (supported: BOOL, I32, I64, F16, BF16, F32, " +
                     "F64)");
    }
    return *dtype;
  }

  std::vector<int64_t> parse_shape(const std::string& name, const nlohmann::json& v) const {
    const char* message = "shape is not a list of non-negative integers";
    if (!v.is_array()) fail(name, message);
    std::vector<int64_t> shape;
    for (const auto& d : v) {
      auto extent = non_negative_integer(d);
      if (!extent || *extent > static_cast<uint64_t>(INT64_MAX)) fail(name, message);
      shape.push_back(static_cast<int64_t>(*extent));
    }
    return shape;
  }

  void parse_offsets(const std::string& name, const nlohmann::json& v, Entry& e) const {
    const char* message = "data_offsets is not two ordered non-negative integers [begin, end]";
    if (!v.is_array() || v.size() != 2) fail(name, message);
    auto begin = non_negative_integer(v[0]);
    auto end = non_negative_integer(v[1]);
    if (!begin || !end || *begin > *end) fail(name, message);
    e.begin = *begin;
    e.end = *end;
  }

  static std::string offsets_string(const Entry& e) {
    return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
  }

  static std::string shape_string(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }

  void check_size(const Entry& e) const {
    uint64_t nbytes = dtype_size(e.dtype);
    for (int64_t extent : e.shape) {
      if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(extent), &nbytes) ||
          nbytes > static_cast<uint64_t>(INT64_MAX)) {
        fail(e.name, "shape " + shape_string(e.shape) + " is too large (its byte count overflows)");
      }
    }
    if (e.end > data_size_) {
      fail(e.name, "data_offsets " + offsets_string(e) + " lie outside the data section (" +
                       std::to_string(data_size_) + " bytes)");
    }
    if (e.end - e.begin != nbytes) {
      fail(e.name, "data_offsets " + offsets_string(e) + " cover " +
                       std::to_string(e.end - e.begin) + " bytes but dtype " +
                       dtype_safetensors_name(e.dtype) + " with shape " + shape_string(e.shape) +
                       " needs " + std::to_string(nbytes) + " bytes");
    }
  }

  // The tensors must tile the data section exactly: no overlap, no hole, nothing left over.
  void check_coverage(const std::vector<Entry>& entries) const {
    std::vector<const Entry*> order;
    for (const auto& e : entries) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
      if (a->begin != b->begin) return a->begin < b->begin;
      if (a->end != b->end) return a->end < b->end;
      return a->name < b->name;
    });
    uint64_t covered = 0;
    const Entry* last = nullptr;  // the tensor that ends at `covered`
    for (const Entry* e : order) {
      if (e->begin < covered) {
        fail("tensors " + quote(last->name) + " and " + quote(e->name) +
             " overlap in the data section (" + offsets_string(*last) + " and " +
             offsets_string(*e) + ")");
      }
      if (e->begin > covered) {
        fail("bytes [" + std::to_string(covered) + ", " + std::to_string(e->begin) +
             ") of the data section are not covered by any tensor (a hole)");
      }
      if (e->end > e->begin || last == nullptr) last = e;
      covered = e->end;
    }
    if (covered != data_size_) {
      fail("bytes [" + std::to_string(covered) + ", " + std::to_string(data_size_) +
           ") at the end of the data section are not covered by any tensor (trailing bytes)");
    }
  }
};

[[noreturn]] void fail_in(const std::string& file, const std::string& message) {
  throw UserError(SourcePlace{file}, message);
}

uint64_t read_u64_le(const std::string& bytes) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return v;
}

std::string u64_le(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

// Parses the header text with the strict JSON reader. Its line/column positions count within
// the header, not the file, so they are reported as "line L, column C" after the file name.
nlohmann::json parse_header_json(std::string_view text, const std::string& file) {
  JsonReadOptions opts;
  opts.max_depth = 8;
  opts.record_positions = false;
  opts.max_bytes = kMaxHeaderBytes;
  try {
    return read_json(text, file, opts).root;
  } catch (const UserError& error) {
    std::string rest = error.what();
    if (rest.compare(0, file.size() + 1, file + ":") == 0) rest.erase(0, file.size() + 1);
    int line = 0, col = 0, used = 0;
    if (std::sscanf(rest.c_str(), "%d:%d: %n", &line, &col, &used) == 2 && used > 0) {
      rest = "line " + std::to_string(line) + ", column " + std::to_string(col) + ": " +
             rest.substr(static_cast<size_t>(used));
    } else if (!rest.empty() && rest[0] == ' ') {
      rest.erase(0, 1);
    }
    throw UserError(SourcePlace{file}, "cannot parse the JSON header: " + rest);
  }
}

}  // namespace

TensorMap parse_safetensors(const std::string& bytes, const std::string& file_for_errors) {
  const std::string& file = file_for_errors;
  auto fail = [&](const std::string& message) { fail_in(file, message); };
  if (bytes.size() < 8) {
    fail("file is too short to be safetensors (" + std::to_string(bytes.size()) +
         " bytes; the 8-byte header length is missing)");
  }
  const uint64_t header_size = read_u64_le(bytes);
  const uint64_t after_length = bytes.size() - 8;
  if (header_size > kMaxHeaderBytes) {
    fail("header length " + std::to_string(header_size) + " is absurd (the limit is " +
         std::to_string(kMaxHeaderBytes) + " bytes)");
  }
  if (header_size > after_length) {
    fail("header length " + std::to_string(header_size) + " is larger than the rest of the file (" +
         std::to_string(after_length) + " bytes): the file is truncated or not safetensors");
  }
  const std::string_view header = std::string_view(bytes).substr(8, header_size);
  const size_t data_start = 8 + static_cast<size_t>(header_size);
  const uint64_t data_size = bytes.size() - data_start;

  nlohmann::json root = parse_header_json(header, file);
  std::vector<Entry> entries = HeaderParser(file, data_size).parse(root);

  TensorMap out;
  for (const Entry& e : entries) {
    HostTensor t(e.dtype, e.shape);
    FUSERC_CHECK(t.nbytes() == e.end - e.begin, "safetensors size check missed a mismatch");
    if (t.nbytes() > 0) std::memcpy(t.data(), bytes.data() + data_start + e.begin, t.nbytes());
    out.emplace(e.name, std::move(t));
  }
  return out;
}

std::map<std::string, SafetensorsEntry> index_safetensors(std::string_view head,
                                                          uint64_t file_size,
                                                          const std::string& file) {
  if (head.size() < 8 || file_size < 8)
    fail_in(file, "file is too short to be safetensors (the 8-byte header length is missing)");
  const uint64_t header_size = read_u64_le(std::string(head.substr(0, 8)));
  if (header_size > kMaxHeaderBytes)
    fail_in(file, "header length " + std::to_string(header_size) + " is absurd (the limit is " +
                      std::to_string(kMaxHeaderBytes) + " bytes)");
  if (header_size > file_size - 8)
    fail_in(file, "header length " + std::to_string(header_size) +
                      " is larger than the rest of the file: the file is truncated or not "
                      "safetensors");
  if (head.size() < 8 + header_size)
    fail_in(file, "cannot read the whole header");
  nlohmann::json root = parse_header_json(head.substr(8, header_size), file);
  const uint64_t data_start = 8 + header_size;
  std::vector<Entry> entries = HeaderParser(file, file_size - data_start).parse(root);
  std::map<std::string, SafetensorsEntry> out;
  for (const Entry& e : entries)
    out[e.name] = SafetensorsEntry{e.dtype, e.shape, data_start + e.begin, e.end - e.begin};
  return out;
}

TensorMap read_safetensors(const std::string& path) {
  return parse_safetensors(read_file(path), path);
}

std::string serialize_safetensors(
    const std::vector<std::pair<std::string, const HostTensor*>>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    FUSERC_CHECK(tensor != nullptr, "null tensor " + quote(name));
    if (name == kMetadataKey)
      throw UserError("cannot write a tensor named '__metadata__' to safetensors (reserved name)");
    if (!names.insert(name).second)
      throw UserError("cannot write two tensors named " + quote(name) + " to one safetensors file");
    const uint64_t nbytes = tensor->nbytes();
    FUSERC_CHECK(nbytes == static_cast<uint64_t>(tensor->numel()) * dtype_size(tensor->dtype()),
                 "tensor " + quote(name) + " has " + std::to_string(nbytes) + " bytes for shape " +
                     tensor->shape_string());
    header[name] = {{"dtype", dtype_safetensors_name(tensor->dtype())},
                    {"shape", tensor->shape()},
                    {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception&) {
    throw UserError("cannot write safetensors: a tensor name is not valid UTF-8");
  }
  text.append((8 - text.size() % 8) % 8, ' ');

  std::string out = u64_le(text.size());
  out.reserve(8 + text.size() + offset);
  out += text;
  for (const auto& entry : tensors) {
    const HostTensor& t = *entry.second;
    out.append(reinterpret_cast<const char*>(t.data()), t.nbytes());
  }
  return out;
}

void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, const HostTensor*>>& tensors) {
  std::string bytes;
  try {
    bytes = serialize_safetensors(tensors);
  } catch (const UserError& error) {
    throw UserError(SourcePlace{path}, error.what());
  }
  write_file_atomically(path, bytes);
}

}  // namespace fuserc
