#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "core/base/safetensors.h"

namespace fuserc {
namespace {

namespace fs = std::filesystem;
using TensorList = std::vector<std::pair<std::string, const HostTensor*>>;

// A fresh directory, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "fuserc_test_XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

std::string le64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
  return out;
}

// A file from header text and data bytes, the header length taken from the text as is.
std::string make_file(const std::string& header, const std::string& data = "") {
  return le64(header.size()) + header + data;
}

const char* kBadFile = "dir/bad.safetensors";

// Parsing `bytes` must fail with a one-line UserError naming the file and containing `phrase`.
void expect_refused(const std::string& bytes, const std::string& phrase) {
  try {
    parse_safetensors(bytes, kBadFile);
  } catch (const UserError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.rfind(std::string(kBadFile) + ": ", 0) == 0);
    CHECK(message.find(phrase) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
    return;
  }
  FAIL("accepted a malformed file; expected an error containing: " << phrase);
}

std::string user_error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  FAIL("no UserError thrown");
  return "";
}

// Seven tensors, one of each dtype, including a rank-0 and two empty ones.
struct Sample {
  HostTensor b{DType::Bool, {3}};
  HostTensor i32{DType::I32, {2, 2}};
  HostTensor i64{DType::I64, {}};
  HostTensor f16{DType::F16, {0}};
  HostTensor bf16{DType::BF16, {2, 1, 2}};
  HostTensor f32{DType::F32, {3, 0, 2}};
  HostTensor f64{DType::F64, {2}};

  Sample() {
    b.store_bool(0, true);
    b.store_bool(2, true);
    for (int i = 0; i < 4; ++i) i32.store_i64(i, (i - 2) * 1000003);
    i64.store_i64(0, -(int64_t(1) << 62) - 7);
    for (int i = 0; i < 4; ++i) bf16.store_f64(i, 0.5 * i - 1.25);
    f64.store_f64(0, 0.1);
    f64.store_f64(1, -1e300);
  }
  TensorList list() const {
    return {{"weights.bool", &b}, {"i32", &i32}, {"scalar i64", &i64},  {"empty_f16", &f16},
            {"bf16", &bf16},      {"f32", &f32}, {"\xc3\xbc f64", &f64}};
  }
};

void check_same(const HostTensor& a, const HostTensor& b) {
  CHECK(a.dtype() == b.dtype());
  CHECK(a.shape() == b.shape());
  CHECK(a.bytes() == b.bytes());
}

}  // namespace

TEST_CASE("safetensors: round trip of all seven dtypes, rank 0 and empty", "[safetensors]") {
  TempDir dir;
  Sample s;
  const std::string path = dir.file("out.safetensors");
  write_safetensors(path, s.list());
  TensorMap read = read_safetensors(path);
  REQUIRE(read.size() == 7);
  for (const auto& [name, tensor] : s.list()) {
    INFO(name);
    REQUIRE(read.count(name) == 1);
    check_same(read.at(name), *tensor);
  }
  CHECK(read.at("scalar i64").load_i64(0) == -(int64_t(1) << 62) - 7);
  CHECK(read.at("scalar i64").rank() == 0);
  CHECK(read.at("i32").load_i64(3) == 1000003);
  CHECK(read.at("bf16").load_f32(3) == 0.25f);
  CHECK(read.at("\xc3\xbc f64").load_f64(0) == 0.1);
  CHECK(read.at("empty_f16").numel() == 0);
  CHECK(read.at("f32").shape() == std::vector<int64_t>{3, 0, 2});
  CHECK(read.at("weights.bool").load_bool(2));
  CHECK(dir.entries() == std::vector<std::string>{"out.safetensors"});
}

TEST_CASE("safetensors: serialized bytes are exact", "[safetensors]") {
  HostTensor w(DType::F32, {2});
  w.store_f32(0, 1.0f);
  w.store_f32(1, -2.0f);
  HostTensor s(DType::I64, {});
  s.store_i64(0, 5);
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("s":{"dtype":"I64","shape":[],"data_offsets":[8,16]}})";
  REQUIRE(header.size() == 107);
  const std::string expected = std::string("\x70\0\0\0\0\0\0\0", 8) + header + "     " +
                               std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8) +
                               std::string("\x05\0\0\0\0\0\0\0", 8);
  // Tensors in the order given, not sorted by name.
  CHECK(serialize_safetensors({{"w", &w}, {"s", &s}}) == expected);
  CHECK(serialize_safetensors({}) == le64(8) + "{}      ");
}

TEST_CASE("safetensors: reading a file written by hand", "[safetensors]") {
  const std::string header =
      R"({"b":{"dtype":"BF16","shape":[],"data_offsets":[8,10]},)"
      R"("a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"format":"pt"}})";
  REQUIRE(header.size() == 139);
  const std::string bytes = std::string("\x8b\0\0\0\0\0\0\0", 8) + header +
                            std::string("\x07\x00\x00\x00\xfe\xff\xff\xff\x80\x3f", 10);
  TempDir dir;
  const std::string path = dir.file("hand.safetensors");
  write_file_atomically(path, bytes);
  TensorMap m = read_safetensors(path);
  REQUIRE(m.size() == 2);
  CHECK(m.at("a").dtype() == DType::I32);
  CHECK(m.at("a").shape() == std::vector<int64_t>{2});
  CHECK(m.at("a").load_i64(0) == 7);
  CHECK(m.at("a").load_i64(1) == -2);
  CHECK(m.at("b").dtype() == DType::BF16);
  CHECK(m.at("b").rank() == 0);
  CHECK(m.at("b").load_f32(0) == 1.0f);

  // Space padding after the JSON, an empty header and empty tensors are all fine.
  CHECK(parse_safetensors(make_file("{}   "), "x").empty());
  TensorMap e =
      parse_safetensors(make_file(R"({"e":{"dtype":"F64","shape":[0,4],"data_offsets":[4,4]},)"
                                  R"("f":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}  )",
                                  std::string("\0\0\x80\x3f", 4)),
                        "x");
  CHECK(e.at("e").numel() == 0);
  CHECK(e.at("f").load_f32(0) == 1.0f);
}

TEST_CASE("safetensors: malformed files are refused with a precise message", "[safetensors]") {
  const std::string f32_one = std::string("\0\0\x80\x3f", 4);
  auto one = [](const std::string& entry) { return std::string(R"({"t":)") + entry + "}"; };

  SECTION("too short") {
    expect_refused("", "too short");
    expect_refused("\x10\0\0", "too short");
    expect_refused(std::string(7, '\0'), "too short");
  }
  SECTION("header length") {
    expect_refused(le64(100) + "{}", "header length 100 is larger than the rest of the file");
    expect_refused(le64(uint64_t(1) << 40) + "{}", "is absurd");
    expect_refused(le64(~uint64_t(0)) + "{}", "is absurd");
    expect_refused(le64(100'000'001) + "{}", "is absurd");
  }
  SECTION("header JSON") {
    expect_refused(make_file(R"({"t":)"), "cannot parse the JSON header");
    expect_refused(make_file(""), "cannot parse the JSON header");
    expect_refused(make_file(std::string("{}\0\0", 4)), "cannot parse the JSON header");
    expect_refused(make_file("{} x"), "cannot parse the JSON header");
    expect_refused(make_file("[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]"),
                   "cannot parse the JSON header");
    expect_refused(make_file("[1, 2]"), "header is not a JSON object");
    expect_refused(make_file("7"), "header is not a JSON object");
  }
  SECTION("entries") {
    expect_refused(make_file(one("5")), "tensor 't': entry is not an object");
    expect_refused(make_file(one("[]")), "tensor 't': entry is not an object");
    expect_refused(
        make_file(one(R"({"dtype":"F32","shape":[],"data_offsets":[0,4],"extra":1})"), f32_one),
        "tensor 't': unknown key 'extra'");
    expect_refused(make_file(one(R"({"dtype":"F32","data_offsets":[0,4]})"), f32_one),
                   "tensor 't': missing key 'shape'");
    expect_refused(make_file(R"({"t":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                             R"("t":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})",
                             f32_one),
                   "duplicate key 't'");
  }
  SECTION("dtype") {
    expect_refused(make_file(one(R"({"dtype":"F8_E4M3","shape":[],"data_offsets":[0,1]})"), "x"),
                   "tensor 't': unknown dtype 'F8_E4M3'");
    expect_refused(make_file(one(R"({"dtype":"f32","shape":[],"data_offsets":[0,4]})"), f32_one),
                   "unknown dtype 'f32'");
    expect_refused(make_file(one(R"({"dtype":"\n\u0001","shape":[],"data_offsets":[0,4]})")),
                   "unknown dtype '\\x0a\\x01'");
    expect_refused(make_file(one(R"({"dtype":4,"shape":[],"data_offsets":[0,4]})"), f32_one),
                   "tensor 't': dtype is not a string");
  }
  SECTION("shape") {
    for (const char* shape : {"5", "[-1]", "[1.0]", R"(["2"])", "[true]", "[[1]]", "null"}) {
      INFO(shape);
      expect_refused(make_file(one(std::string(R"({"dtype":"F32","shape":)") + shape +
                                   R"(,"data_offsets":[0,4]})"),
                               f32_one),
                     "tensor 't': shape is not a list of non-negative integers");
    }
    expect_refused(make_file(one(R"({"dtype":"F32","shape":[4294967296,4294967296],)"
                                 R"("data_offsets":[0,4]})"),
                             f32_one),
                   "shape [4294967296, 4294967296] is too large (its byte count overflows)");
    expect_refused(make_file(one(R"({"dtype":"F64","shape":[1152921504606846976],)"
                                 R"("data_offsets":[0,8]})"),
                             std::string(8, '\0')),
                   "byte count overflows");
  }
  SECTION("data_offsets") {
    for (const char* offsets :
         {"[0]", "[0,4,8]", "[4,0]", R"(["0","4"])", "[-1,3]", "4", "[0,4.0]", "[]", "{}"}) {
      INFO(offsets);
      expect_refused(make_file(one(std::string(R"({"dtype":"F32","shape":[1],"data_offsets":)") +
                                   offsets + "}"),
                               f32_one),
                     "tensor 't': data_offsets is not two ordered non-negative integers");
    }
    expect_refused(make_file(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), f32_one),
                   "tensor 't': data_offsets [0, 8] lie outside the data section (4 bytes)");
    expect_refused(make_file(one(R"({"dtype":"F32","shape":[],"data_offsets":[9223372036854775803,)"
                                 R"(9223372036854775807]})"),
                             f32_one),
                   "lie outside the data section");
    expect_refused(make_file(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,4]})"), f32_one),
                   "tensor 't': data_offsets [0, 4] cover 4 bytes but dtype F32 with shape [2] "
                   "needs 8 bytes");
    expect_refused(make_file(one(R"({"dtype":"F16","shape":[0],"data_offsets":[0,4]})"), f32_one),
                   "cover 4 bytes but dtype F16 with shape [0] needs 0 bytes");
  }
  SECTION("coverage of the data section") {
    expect_refused(make_file(R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"F32","shape":[],"data_offsets":[2,6]}})",
                             std::string(6, '\0')),
                   "tensors 'a' and 'b' overlap in the data section");
    expect_refused(make_file(R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})",
                             f32_one),
                   "overlap in the data section");
    expect_refused(make_file(R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"F32","shape":[],"data_offsets":[8,12]}})",
                             std::string(12, '\0')),
                   "bytes [4, 8) of the data section are not covered by any tensor (a hole)");
    expect_refused(
        make_file(R"({"b":{"dtype":"F32","shape":[],"data_offsets":[4,8]}})", std::string(8, '\0')),
        "bytes [0, 4) of the data section are not covered");
    expect_refused(
        make_file(one(R"({"dtype":"F32","shape":[],"data_offsets":[0,4]})"), f32_one + "xyz"),
        "bytes [4, 7) at the end of the data section are not covered by any tensor "
        "(trailing bytes)");
    expect_refused(make_file("{}", "x"), "bytes [0, 1) at the end of the data section");
  }
  SECTION("__metadata__") {
    expect_refused(make_file(R"({"__metadata__":"pt"})"),
                   "__metadata__ is not an object of strings");
    expect_refused(make_file(R"({"__metadata__":{"format":"pt","n":1}})"),
                   "__metadata__ is not an object of strings (the value of 'n' is not a string)");
    expect_refused(make_file(R"({"__metadata__":[]})"), "__metadata__ is not an object of strings");
    CHECK(parse_safetensors(make_file(R"({"__metadata__":{"format":"pt"}})"), "x").empty());
  }
}

TEST_CASE("safetensors: a truncated file is refused at every length", "[safetensors]") {
  Sample s;
  const std::string bytes = serialize_safetensors(s.list());
  REQUIRE(parse_safetensors(bytes, "ok").size() == 7);
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      parse_safetensors(bytes.substr(0, n), kBadFile);
      FAIL("a file truncated to " << n << " of " << bytes.size() << " bytes was accepted");
    } catch (const UserError& e) {
      const std::string message = e.what();
      if (message.rfind(std::string(kBadFile) + ": ", 0) != 0) FAIL(message);
    }
  }
  TempDir dir;
  const std::string path = dir.file("cut.safetensors");
  write_file_atomically(path, bytes.substr(0, bytes.size() - 1));
  CHECK_THAT(user_error_message([&] { read_safetensors(path); }),
             Catch::StartsWith(path + ": ") && Catch::Contains("outside the data section"));
}

TEST_CASE("safetensors: corrupting any byte never crashes", "[safetensors]") {
  Sample s;
  const std::string bytes = serialize_safetensors(s.list());
  int refused = 0;
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    const auto original = static_cast<unsigned char>(bytes[pos]);
    for (unsigned value :
         {0x00u, 0x20u, 0x22u, 0x7bu, 0x5du, 0xffu, original ^ 1u, original + 1u}) {
      std::string corrupt = bytes;
      corrupt[pos] = static_cast<char>(value);
      try {
        parse_safetensors(corrupt, kBadFile);  // some corruptions (in the data) are valid
      } catch (const UserError&) {
        ++refused;
      }
    }
  }
  CHECK(refused > 0);
}

TEST_CASE("safetensors: writer errors", "[safetensors]") {
  TempDir dir;
  HostTensor t(DType::F32, {1});
  const std::string path = dir.file("w.safetensors");
  CHECK_THAT(user_error_message([&] {
               write_safetensors(path, {{"a", &t}, {"a", &t}});
             }),
             Catch::StartsWith(path + ": ") && Catch::Contains("two tensors named 'a'"));
  CHECK_THAT(user_error_message([&] {
               write_safetensors(path, {{"__metadata__", &t}});
             }),
             Catch::StartsWith(path + ": ") && Catch::Contains("reserved"));
  CHECK_THAT(user_error_message([&] {
               write_safetensors(path, {{"bad \xff name", &t}});
             }),
             Catch::StartsWith(path + ": ") && Catch::Contains("not valid UTF-8"));
  const std::string missing = dir.file("no/such/dir/w.safetensors");
  CHECK_THAT(user_error_message([&] {
               write_safetensors(missing, {{"a", &t}});
             }),
             Catch::Equals(missing + ": cannot write: No such file or directory"));
  CHECK(dir.entries().empty());
}

TEST_CASE("file_io: read_file", "[file_io]") {
  TempDir dir;
  const std::string missing = dir.file("missing.bin");
  CHECK_THAT(user_error_message([&] { read_file(missing); }),
             Catch::Equals(missing + ": cannot read: No such file or directory"));
  CHECK_THAT(user_error_message([&] { read_file(dir.file("")); }),
             Catch::Contains(": cannot read: Is a directory"));
  const std::string path = dir.file("data.bin");
  const std::string content = std::string("a\0b\xff\n", 5) + std::string(200000, 'z');
  write_file_atomically(path, content);
  CHECK(read_file(path) == content);
  CHECK(read_file(path, content.size()) == content);
  CHECK_THAT(user_error_message([&] { read_file(path, content.size() - 1); }),
             Catch::StartsWith(path + ": cannot read: ") && Catch::Contains("too large"));
  write_file_atomically(path, "");
  CHECK(read_file(path).empty());
}

TEST_CASE("file_io: write_file_atomically", "[file_io]") {
  TempDir dir;
  const std::string path = dir.file("out.txt");
  write_file_atomically(path, "first");
  CHECK(read_file(path) == "first");
  write_file_atomically(path, "second, longer");
  CHECK(read_file(path) == "second, longer");
  CHECK(dir.entries() == std::vector<std::string>{"out.txt"});  // no temporary file left

  // A missing directory is a UserError naming the file, and nothing is created.
  const std::string missing = dir.file("nope/out.txt");
  CHECK_THAT(user_error_message([&] { write_file_atomically(missing, "x"); }),
             Catch::Equals(missing + ": cannot write: No such file or directory"));
  CHECK(dir.entries() == std::vector<std::string>{"out.txt"});

  // Renaming over a directory fails after the temporary file was written: it is removed.
  REQUIRE(mkdir(dir.file("sub").c_str(), 0755) == 0);
  const std::string over_dir = dir.file("sub");
  CHECK_THAT(user_error_message([&] { write_file_atomically(over_dir, "x"); }),
             Catch::StartsWith(over_dir + ": cannot write: "));
  CHECK(dir.entries() == std::vector<std::string>{"out.txt", "sub"});
  CHECK(fs::is_empty(over_dir));
}

}  // namespace fuserc
