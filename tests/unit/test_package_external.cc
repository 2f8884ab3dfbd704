// Tests for constants and the external data section (format version 3): small packages built
// by hand with the fb:: builders and put together by the package file writer; round trips
// through open_file, from_bytes and view_bytes; opening reads, maps and allocates nothing of
// the external data (a damaged piece fails only when its constant is asked for); alignment of
// mapped pieces; refusal of hostile trailers, refs and shapes; the old FZPKEND1 layout; the
// streamed writer leaving nothing behind on failure.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "core/base/content_hash.h"
#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "serde/package_file.h"
#include "serde/reader/package_layout.h"
#include "serde/reader/package_reader.h"
#include "temp_dir.h"
#include "test_util.h"

using namespace fuserc;
using fuserc::testing::error_of;
using fuserc::testing::TempDir;

namespace {

struct TestConstant {
  std::string name;
  fb::DType dtype;
  std::vector<int64_t> shape;
  std::string bytes;
  bool external;
  std::optional<fb::BlobRef> ref;  // overrides the ref the writer would give (hostile packages)
  int buffer = -1;
};

struct Built {
  std::string flatbuffer;
  size_t blob_offset = 0, blob_size = 0;
  std::vector<std::string> pieces;  // the external constants' bytes, in order

  std::vector<std::string_view> piece_views() const {
    return std::vector<std::string_view>(pieces.begin(), pieces.end());
  }
  std::string bytes() const {
    return assemble_package(flatbuffer, blob_offset, blob_size, piece_views());
  }
};

// A package with no kernels and the given constants (inline ones in blob_data, external ones
// at the offsets layout_external gives), as a writer of `version` would build it.
Built build(const std::vector<TestConstant>& constants, uint32_t version = 3,
            bool with_constants = true) {
  Built out;
  std::string blobs;
  std::vector<uint64_t> sizes;
  for (const auto& c : constants)
    if (c.external) sizes.push_back(c.bytes.size());
  uint64_t section = 0;
  std::vector<uint64_t> offsets = layout_external(sizes, &section);

  flatbuffers::FlatBufferBuilder m;
  std::vector<flatbuffers::Offset<fb::Constant>> cs;
  size_t next_external = 0;
  for (const auto& c : constants) {
    fb::BlobRef ref;
    if (c.external) {
      ref = fb::BlobRef(offsets[next_external++], c.bytes.size(), content_hash64(c.bytes));
      out.pieces.push_back(c.bytes);
    } else {
      ref = fb::BlobRef(blobs.size(), c.bytes.size(), content_hash64(c.bytes));
      blobs += c.bytes;
    }
    if (c.ref) ref = *c.ref;
    auto name =
        c.name.empty() ? flatbuffers::Offset<flatbuffers::String>() : m.CreateString(c.name);
    auto shape = m.CreateVector(c.shape);
    fb::ConstantBuilder cb(m);
    if (!c.name.empty()) cb.add_name(name);
    cb.add_dtype(c.dtype);
    cb.add_shape(shape);
    cb.add_data(&ref);
    cb.add_external(c.external);
    cb.add_buffer(c.buffer);
    cs.push_back(cb.Finish());
  }
  auto constants_v = m.CreateVector(cs);
  auto name = m.CreateString("consts");
  auto symbols = m.CreateVector(std::vector<flatbuffers::Offset<fb::Symbol>>{});
  auto inputs = m.CreateVector(std::vector<flatbuffers::Offset<fb::Tensor>>{});
  auto outputs = m.CreateVector(std::vector<flatbuffers::Offset<fb::Tensor>>{});
  std::vector<fb::Instr> instrs = {fb::Instr(fb::Opcode::Const, 0, 0, 0, 0)};
  auto program = m.CreateVectorOfStructs(instrs);
  auto kernels = m.CreateVector(std::vector<flatbuffers::Offset<fb::Kernel>>{});
  auto buffers = m.CreateVector(std::vector<flatbuffers::Offset<fb::Buffer>>{});
  auto plan = m.CreateVector(std::vector<flatbuffers::Offset<fb::Launch>>{});
  auto provenance = fb::CreateProvenance(m);
  fb::MetadataBuilder mb(m);
  mb.add_format_version(version);
  mb.add_name(name);
  mb.add_symbols(symbols);
  mb.add_inputs(inputs);
  mb.add_outputs(outputs);
  mb.add_program(program);
  mb.add_kernels(kernels);
  mb.add_buffers(buffers);
  mb.add_plan(plan);
  mb.add_workspace_bytes_slot(0);
  mb.add_provenance(provenance);
  if (with_constants) mb.add_constants(constants_v);
  m.Finish(mb.Finish());

  flatbuffers::FlatBufferBuilder b;
  auto blob_data = b.CreateVector(reinterpret_cast<const uint8_t*>(blobs.data()), blobs.size());
  b.ForceVectorAlignment(m.GetSize(), sizeof(uint8_t), alignof(uint64_t));
  auto meta = b.CreateVector(m.GetBufferPointer(), m.GetSize());
  fb::PackageBuilder p(b);
  p.add_format_version(version);
  p.add_metadata(meta);
  p.add_metadata_hash(content_hash64(m.GetBufferPointer(), m.GetSize()));
  p.add_blob_data(blob_data);
  fb::FinishPackageBuffer(b, p.Finish());
  out.flatbuffer.assign(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  const fb::Package* pkg = fb::GetPackage(out.flatbuffer.data());
  out.blob_offset = pkg->blob_data()->data() - flatbuffers::GetBufferStartFromRootPointer(pkg);
  out.blob_size = blobs.size();
  return out;
}

std::string pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 17 + (i >> 8)) & 0xff);
  return s;
}

// w1: 1000 bytes (so w2 starts after 24 bytes of padding), b and s inline, e empty.
std::vector<TestConstant> sample(size_t big = 0) {
  std::vector<TestConstant> cs = {
      {"w1", fb::DType::F32, {10, 25}, pattern(1000, 1), true},
      {"b", fb::DType::F16, {3}, pattern(6, 2), false},
      {"w2", fb::DType::I64, {5, 7}, pattern(280, 3), true},
      {"s", fb::DType::Bool, {}, std::string(1, '\1'), false},
      {"e", fb::DType::BF16, {0, 3}, "", true},
  };
  if (big) cs.push_back({"big", fb::DType::F64, {int64_t(big / 8)}, pattern(big, 4), true});
  return cs;
}

const fb::Constant& constant(const PackageView& v, const std::string& name) {
  for (const auto* c : *v.metadata().constants())
    if (c->name()->str() == name) return *c;
  FAIL("no constant " << name);
  throw 0;
}

// Every constant's bytes through `v` equal `cs`'s, twice (the second from the checked cache).
void check_constants(const PackageView& v, const std::vector<TestConstant>& cs) {
  REQUIRE(v.metadata().constants()->size() == cs.size());
  for (const auto& c : cs) {
    INFO("constant " << c.name);
    std::string_view data = v.constant_data(constant(v, c.name));
    CHECK(data == c.bytes);
    CHECK(v.constant_data(constant(v, c.name)).data() == data.data());
    if (!c.bytes.empty())
      CHECK(v.constant_data_aligned(constant(v, c.name)) ==
            (reinterpret_cast<uintptr_t>(data.data()) % kExternalAlignment == 0));
  }
}

bool mapped(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const std::string canonical = std::filesystem::canonical(path).string();
  while (std::getline(maps, line))
    if (line.size() >= canonical.size() &&
        line.compare(line.size() - canonical.size(), canonical.size(), canonical) == 0)
      return true;
  return false;
}

// The trailer of `bytes` rewritten by `edit` (the head hash kept).
std::string with_trailer(std::string bytes, const std::function<void(PackageTrailer&)>& edit) {
  auto* end = reinterpret_cast<uint8_t*>(bytes.data()) + bytes.size() - kPackageTrailerSize;
  PackageTrailer t;
  REQUIRE(decode_trailer(end, t));
  edit(t);
  encode_trailer(t, end);
  return bytes;
}

PackageTrailer trailer_of(const std::string& bytes) {
  PackageTrailer t;
  REQUIRE(decode_trailer(
      reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size() - kPackageTrailerSize, t));
  return t;
}

std::string open_error(const std::string& bytes) {
  return error_of([&] { PackageView::from_bytes(bytes, "p.fpkg"); });
}

}  // namespace

TEST_CASE("external layout: pieces at multiples of 256, back to back", "[package]") {
  uint64_t section = 99;
  CHECK(layout_external({}, &section).empty());
  CHECK(section == 0);
  CHECK(layout_external({1000, 0, 256, 1, 3}, &section) ==
        std::vector<uint64_t>{0, 0, 1024, 1280, 1536});
  CHECK(section == 1539);
  CHECK(external_section_offset(5000, 0) == 5000);
  CHECK(external_section_offset(5000, 1) == 8192);
  CHECK(external_section_offset(8192, 1) == 8192);
}

TEST_CASE("external data: the file layout around the FlatBuffer", "[package]") {
  Built b = build(sample());
  std::string bytes = b.bytes();
  PackageTrailer t;
  REQUIRE(decode_trailer(
      reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size() - kPackageTrailerSize, t));
  CHECK(t.blob_offset == b.blob_offset);
  CHECK(t.blob_size == 7);
  CHECK(t.external_offset % kExternalSectionAlignment == 0);
  CHECK(t.external_offset >= b.flatbuffer.size());
  CHECK(t.external_offset - b.flatbuffer.size() < kExternalSectionAlignment);
  CHECK(t.external_size == 1024 + 280);
  CHECK(bytes.size() == t.external_offset + t.external_size + kPackageTrailerSize);
  CHECK(bytes.compare(0, b.flatbuffer.size(), b.flatbuffer) == 0);
  CHECK(bytes.substr(b.flatbuffer.size(), t.external_offset - b.flatbuffer.size()) ==
        std::string(t.external_offset - b.flatbuffer.size(), '\0'));
  CHECK(bytes.substr(t.external_offset, 1000) == b.pieces[0]);
  CHECK(bytes.substr(t.external_offset + 1000, 24) == std::string(24, '\0'));
  CHECK(bytes.substr(t.external_offset + 1024, 280) == b.pieces[1]);
  // Without external data the trailer follows the FlatBuffer.
  Built inline_only = build({{"b", fb::DType::F16, {3}, pattern(6, 2), false}});
  std::string small = inline_only.bytes();
  CHECK(small.size() == inline_only.flatbuffer.size() + kPackageTrailerSize);
  REQUIRE(decode_trailer(
      reinterpret_cast<const uint8_t*>(small.data()) + small.size() - kPackageTrailerSize, t));
  CHECK(t.external_offset == inline_only.flatbuffer.size());
  CHECK(t.external_size == 0);
  // Deterministic.
  CHECK(build(sample()).bytes() == bytes);
}

TEST_CASE("external data: round trips through a file, bytes and a borrowed view", "[package]") {
  TempDir dir;
  for (size_t big : {size_t{0}, size_t{20000}}) {  // one read, and trailer then head
    INFO("big piece: " << big);
    auto cs = sample(big);
    Built b = build(cs);
    std::string bytes = b.bytes();
    const std::string path = dir / "p.fpkg";
    write_package_file(path, b.flatbuffer, b.blob_offset, b.blob_size, b.piece_views());
    CHECK(read_file(path) == bytes);

    auto file = PackageView::open_file(path);
    CHECK(file->size() == bytes.size());
    CHECK(file->metadata().format_version() == 3);
    check_constants(*file, cs);
    for (const auto& c : cs) {
      if (!c.external || c.bytes.empty()) continue;
      // Mapped from a page boundary: every piece at a multiple of 256 in memory.
      CHECK(file->constant_data_aligned(constant(*file, c.name)));
      CHECK(reinterpret_cast<uintptr_t>(file->constant_data(constant(*file, c.name)).data()) %
                kExternalAlignment ==
            0);
    }
    REQUIRE_NOTHROW(file->verify_all());

    auto owned = PackageView::from_bytes(bytes, "p.fpkg");
    check_constants(*owned, cs);
    REQUIRE_NOTHROW(owned->verify_all());

    // Borrowed bytes at a page boundary: external pieces aligned, and views into the bytes.
    std::unique_ptr<uint8_t, decltype(&std::free)> page(
        static_cast<uint8_t*>(std::aligned_alloc(4096, (bytes.size() + 4096) / 4096 * 4096)),
        &std::free);
    std::memcpy(page.get(), bytes.data(), bytes.size());
    auto view = PackageView::view_bytes(page.get(), bytes.size(), "p.fpkg");
    check_constants(*view, cs);
    const fb::Constant& w2 = constant(*view, "w2");
    CHECK(view->constant_data_aligned(w2));
    CHECK(reinterpret_cast<const uint8_t*>(view->constant_data(w2).data()) ==
          page.get() + trailer_of(bytes).external_offset + 1024);
    // Borrowed bytes at an odd address: the head is copied, the external data is not.
    std::vector<uint8_t> odd(bytes.size() + 1);
    std::memcpy(odd.data() + 1, bytes.data(), bytes.size());
    auto shifted = PackageView::view_bytes(odd.data() + 1, bytes.size(), "p.fpkg");
    check_constants(*shifted, cs);
    const char* w1 = shifted->constant_data(constant(*shifted, "w1")).data();
    CHECK(reinterpret_cast<const uint8_t*>(w1) > odd.data());
    CHECK(reinterpret_cast<const uint8_t*>(w1) < odd.data() + odd.size());
    CHECK_FALSE(shifted->constant_data_aligned(constant(*shifted, "w1")));
  }
}

TEST_CASE("external data: opening reads none of it, a damaged piece fails only when used",
          "[package]") {
  TempDir dir;
  auto cs = sample(20000);
  Built b = build(cs);
  std::string bytes = b.bytes();
  const size_t section = trailer_of(bytes).external_offset;
  const std::string path = dir / "p.fpkg";

  std::string damaged = bytes;
  damaged[section + 1024 + 100] ^= 0x20;  // in w2
  write_file_atomically(path, damaged);
  auto v = PackageView::open_file(path);
  CHECK_FALSE(mapped(path));  // opening maps nothing
  CHECK(v->constant_data(constant(*v, "w1")) == cs[0].bytes);
  CHECK(mapped(path));  // the first external constant asked for maps the section
  CHECK(error_of([&] { v->constant_data(constant(*v, "w2")); }) ==
        path + ": corrupted package: the data of constant 'w2' does not match its hash");
  // Asked again, it fails again (it was not marked checked).
  CHECK(error_of([&] { v->constant_data(constant(*v, "w2")); }) ==
        path + ": corrupted package: the data of constant 'w2' does not match its hash");
  CHECK(v->constant_data(constant(*v, "big")) == cs[5].bytes);
  CHECK(v->constant_data(constant(*v, "b")) == cs[1].bytes);
  CHECK(error_of([&] { v->verify_all(); }) ==
        path + ": corrupted package: the data of constant 'w2' does not match its hash");

  // The same from bytes in memory.
  auto m = PackageView::from_bytes(damaged, "p.fpkg");
  CHECK(m->constant_data(constant(*m, "w1")) == cs[0].bytes);
  CHECK(error_of([&] { m->constant_data(constant(*m, "w2")); }) ==
        "p.fpkg: corrupted package: the data of constant 'w2' does not match its hash");

  // An inline constant's data is checked the same way, with the same message.
  std::string inline_damaged = bytes;
  inline_damaged[b.blob_offset + 1] ^= 0x01;  // in b
  auto i = PackageView::from_bytes(inline_damaged, "p.fpkg");
  CHECK(error_of([&] { i->constant_data(constant(*i, "b")); }) ==
        "p.fpkg: corrupted package: the data of constant 'b' does not match its hash");
  CHECK(i->constant_data(constant(*i, "s")) == cs[3].bytes);

  // Two refs at one offset are checked apart: the shorter one's check does not vouch for the
  // longer one's other bytes.
  const std::string a8 = pattern(8, 5);
  Built shared = build(
      {{"a", fb::DType::F32, {2}, a8, false},
       {"h", fb::DType::F32, {1}, "", false, fb::BlobRef(0, 4, content_hash64(a8.substr(0, 4)))}});
  std::string shared_bytes = shared.bytes();
  shared_bytes[shared.blob_offset + 6] ^= 0x01;
  auto sh = PackageView::from_bytes(shared_bytes, "p.fpkg");
  CHECK(sh->constant_data(constant(*sh, "h")) == a8.substr(0, 4));
  CHECK(error_of([&] { sh->constant_data(constant(*sh, "a")); }) ==
        "p.fpkg: corrupted package: the data of constant 'a' does not match its hash");

  // The zero padding between pieces is checked by verify_all.
  std::string padding = bytes;
  padding[section + 1000 + 3] = 1;
  auto p = PackageView::from_bytes(padding, "p.fpkg");
  check_constants(*p, cs);
  CHECK(error_of([&] { p->verify_all(); }) ==
        "p.fpkg: corrupted package: the padding of its external data is not zero");
  // The padding before the external section is hashed as zeros without being read (opening
  // reads only up to the blobs): verify_all checks it.
  std::string head_padding = bytes;
  head_padding[section - 1] = 1;
  CHECK(open_error(head_padding) == "<no error>");
  auto hp = PackageView::from_bytes(head_padding, "p.fpkg");
  CHECK(error_of([&] { hp->verify_all(); }) ==
        "p.fpkg: corrupted package: the padding after its blobs is not zero");
}

TEST_CASE("external data: a package with 1 GB of it opens in a few KB of memory", "[package]") {
  TempDir dir;
  // A sparse file: the FlatBuffer names a 1 GB external constant whose bytes were never
  // written (reading or copying them would take seconds and a gigabyte).
  const uint64_t size = uint64_t{1} << 30;
  Built b =
      build({{"huge", fb::DType::F32, {int64_t(size / 4)}, "", true, fb::BlobRef(0, size, 0)}});
  std::string head = b.bytes().substr(0, b.flatbuffer.size());
  const uint64_t section = external_section_offset(b.flatbuffer.size(), size);
  PackageTrailer t;
  t.head_hash = package_head_hash(reinterpret_cast<const uint8_t*>(head.data()), head.size(),
                                  b.blob_offset, b.blob_size, section - head.size());
  t.blob_offset = b.blob_offset;
  t.blob_size = b.blob_size;
  t.external_offset = section;
  t.external_size = size;
  uint8_t trailer[kPackageTrailerSize];
  encode_trailer(t, trailer);
  const std::string path = dir / "huge.fpkg";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, head.data(), head.size(), 0) == ssize_t(head.size()));
  REQUIRE(::pwrite(fd, trailer, sizeof trailer, off_t(section + size)) == ssize_t(sizeof trailer));
  ::close(fd);

  auto heap = [] {
    struct mallinfo2 m = mallinfo2();
    return static_cast<int64_t>(m.uordblks + m.hblkhd);
  };
  const int64_t before = heap();
  auto v = PackageView::open_file(path);
  CHECK(heap() - before < (int64_t{1} << 20));
  CHECK_FALSE(mapped(path));
  const fb::Constant& huge = *v->metadata().constants()->Get(0);
  CHECK(v->constant_data_aligned(huge));
  CHECK(v->size() == section + size + kPackageTrailerSize);
}

TEST_CASE("external data: concurrent first uses map and check once", "[package]") {
  TempDir dir;
  auto cs = sample(20000);
  Built b = build(cs);
  const std::string path = dir / "p.fpkg";
  write_package_file(path, b.flatbuffer, b.blob_offset, b.blob_size, b.piece_views());
  auto v = PackageView::open_file(path);
  // Catch2's assertions are not thread-safe: the threads record, the test checks.
  const auto* constants = v->metadata().constants();
  std::vector<std::vector<std::string_view>> seen(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      for (const auto* c : *constants) seen[i].push_back(v->constant_data(*c));
    });
  for (auto& t : threads) t.join();
  for (const auto& s : seen) {
    REQUIRE(s.size() == cs.size());
    for (size_t k = 0; k < cs.size(); ++k) {
      CHECK(s[k] == cs[k].bytes);
      CHECK(s[k].data() == seen[0][k].data());
    }
  }
}

TEST_CASE("external data: every truncation and every flipped byte is refused", "[package]") {
  std::string bytes = build(sample()).bytes();
  REQUIRE_NOTHROW(PackageView::from_bytes(bytes, "p.fpkg")->verify_all());
  for (size_t len = 0; len < bytes.size(); ++len) {
    INFO("truncated to " << len << " bytes");
    CHECK_THROWS_AS(
        PackageView::view_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), len, "p")
            ->verify_all(),
        UserError);
  }
  std::string mutated = bytes;
  const uint8_t* data = reinterpret_cast<const uint8_t*>(mutated.data());
  for (size_t i = 0; i < mutated.size(); ++i) {
    mutated[i] = static_cast<char>(mutated[i] ^ 0x81);
    INFO("byte " << i << " flipped");
    CHECK_THROWS_AS(PackageView::view_bytes(data, mutated.size(), "p")->verify_all(), UserError);
    mutated[i] = bytes[i];
  }
}

TEST_CASE("external data: hostile trailers are refused", "[package]") {
  std::string bytes = build(sample()).bytes();
  const std::string outside = "p.fpkg: corrupted package: its trailer points outside the file";
  CHECK(open_error(with_trailer(bytes, [](PackageTrailer& t) { t.external_offset += 256; })) ==
        outside);
  CHECK(open_error(with_trailer(bytes, [](PackageTrailer& t) { t.external_size += 1; })) ==
        outside);
  CHECK(open_error(with_trailer(bytes, [](PackageTrailer& t) {
          t.external_offset += 4096;
          t.external_size -= 4096;
        })) == outside);
  CHECK(open_error(with_trailer(bytes, [&](PackageTrailer& t) {
          t.external_offset = ~uint64_t{0} - 4095;
          t.external_size = 4096 + bytes.size();
        })) == outside);
  CHECK(open_error(with_trailer(
            bytes, [](PackageTrailer& t) { t.blob_offset = t.external_offset; })) == outside);
  CHECK(open_error(with_trailer(bytes, [](PackageTrailer& t) { t.blob_size = ~uint64_t{0}; })) ==
        outside);
  // Moving the section onto the FlatBuffer's end changes what the head hash covers.
  CHECK(open_error(with_trailer(bytes, [](PackageTrailer& t) {
          t.external_offset -= 4096;
          t.external_size += 4096;
        })) != "<no error>");
  // A trailer from a newer layout.
  std::string newer = bytes;
  newer.back() = '3';
  CHECK(open_error(newer) ==
        "p.fpkg: the package was written by a newer fuserc (its trailer is FZPKEND3; this "
        "fuserc reads FZPKEND1 and FZPKEND2)");
  newer.back() = 'x';
  CHECK(open_error(newer) == "p.fpkg: truncated or corrupted package: the end marker is missing (" +
                                 std::to_string(bytes.size()) + " bytes)");
}

TEST_CASE("external data: hostile constants are refused at open", "[package]") {
  auto with = [](TestConstant c, uint32_t version = 3) {
    auto cs = sample();
    cs.push_back(std::move(c));
    return open_error(build(cs, version).bytes());
  };
  const std::string bad = "p.fpkg: corrupted package: ";
  const uint64_t h = content_hash64(pattern(64, 9));
  CHECK(with({"x", fb::DType::F32, {16}, pattern(64, 9), true, fb::BlobRef(1792, 64, h)}) ==
        bad + "a constant's data lies outside the external data");
  CHECK(with({"x", fb::DType::F32, {16}, pattern(64, 9), true, fb::BlobRef(~0ull - 8, 64, h)}) ==
        bad + "a constant's data lies outside the external data");
  CHECK(with({"x", fb::DType::F32, {16}, pattern(64, 9), true, fb::BlobRef(1024 + 16, 64, h)}) ==
        bad + "a constant's external data is misaligned");
  CHECK(with({"x", fb::DType::F32, {16}, pattern(64, 9), false, fb::BlobRef(16, 64, h)}) ==
        bad + "a constant's data lies outside the blob data");
  CHECK(with({"x", fb::DType::F32, {4, 5}, pattern(64, 9), true}) ==
        bad + "a constant's shape and the size of its data disagree");
  CHECK(with({"x", fb::DType::F64, {16}, pattern(64, 9), true}) ==
        bad + "a constant's shape and the size of its data disagree");
  CHECK(with({"x", fb::DType::F32, {-16}, pattern(64, 9), true}) ==
        bad + "a constant's shape and the size of its data disagree");
  // 2^62 * 2^2 * 4 bytes wraps to 0 in 64 bits: an overflow, not an empty tensor.
  CHECK(with({"x", fb::DType::F32, {int64_t{1} << 62, 4}, "", true}) ==
        bad + "a constant's shape and the size of its data disagree");
  CHECK(with({"x", fb::DType::F32, {int64_t{1} << 61, 2}, "", false}) ==
        bad + "a constant's shape and the size of its data disagree");
  CHECK(with({"x", fb::DType::F32, {0, int64_t{1} << 62, 8}, "", true}) == "<no error>");
  CHECK(with({"x", static_cast<fb::DType>(7), {16}, pattern(64, 9), true}) ==
        bad + "a constant has an unknown dtype");
  CHECK(with({"", fb::DType::F32, {16}, pattern(64, 9), true}) == bad + "a constant is incomplete");
  TestConstant buffered{"x", fb::DType::F32, {16}, pattern(64, 9), true};
  buffered.buffer = 0;  // the package has no buffers
  CHECK(with(buffered) == bad + "a constant names an unknown buffer");
  buffered.buffer = -2;
  CHECK(with(buffered) == bad + "a constant names an unknown buffer");
  // Constants and external data belong to version 3.
  CHECK(open_error(build(sample(), 2).bytes()) ==
        bad + "external data in a package of format version 2");
  CHECK(open_error(build({{"b", fb::DType::F16, {3}, pattern(6, 2), false}}, 2).bytes()) ==
        bad + "a package older than format version 3 has constants");
  // Version 3 packages may have no constants at all.
  auto none = PackageView::from_bytes(build({}, 3, false).bytes(), "p.fpkg");
  CHECK(none->metadata().constants() == nullptr);
  REQUIRE_NOTHROW(none->verify_all());
}

TEST_CASE("external data: a version 2 package (FZPKEND1 trailer) still opens", "[package]") {
  // The bytes a version 2 writer produced: the FlatBuffer, then the 32-byte trailer.
  Built b = build({}, 2, false);
  const auto* fbytes = reinterpret_cast<const uint8_t*>(b.flatbuffer.data());
  std::string old = b.flatbuffer;
  uint8_t trailer[kPackageTrailerSizeV1];
  auto put64 = [](uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
  };
  put64(trailer, package_head_hash(fbytes, b.flatbuffer.size(), b.blob_offset, b.blob_size));
  put64(trailer + 8, b.blob_offset);
  put64(trailer + 16, b.blob_size);
  std::memcpy(trailer + 24, "FZPKEND1", 8);
  old.append(reinterpret_cast<const char*>(trailer), sizeof trailer);

  auto v = PackageView::from_bytes(old, "old.fpkg");
  CHECK(v->metadata().format_version() == 2);
  CHECK(v->metadata().name()->str() == "consts");
  REQUIRE_NOTHROW(v->verify_all());
  TempDir dir;
  write_file_atomically(dir / "old.fpkg", old);
  REQUIRE_NOTHROW(PackageView::open_file(dir / "old.fpkg")->verify_all());
  // A damaged old package is refused as before.
  std::string flipped = old;
  flipped[20] ^= 1;
  CHECK(error_of([&] { PackageView::from_bytes(flipped, "old.fpkg"); }) ==
        "old.fpkg: corrupted package: the checksum of its structure does not match");

  // A version 3 package always ends with FZPKEND2.
  Built v3 = build({}, 3, false);
  std::string mislabeled = v3.flatbuffer;
  put64(trailer, package_head_hash(reinterpret_cast<const uint8_t*>(v3.flatbuffer.data()),
                                   v3.flatbuffer.size(), v3.blob_offset, v3.blob_size));
  put64(trailer + 8, v3.blob_offset);
  put64(trailer + 16, v3.blob_size);
  mislabeled.append(reinterpret_cast<const char*>(trailer), sizeof trailer);
  CHECK(error_of([&] { PackageView::from_bytes(mislabeled, "p.fpkg"); }) ==
        "p.fpkg: corrupted package: its trailer (FZPKEND1) is older than its format version 3");
}

TEST_CASE("package file writer: nothing is left behind on failure", "[package]") {
  TempDir dir;
  Built b = build(sample());
  const std::string missing = dir / "missing/p.fpkg";
  CHECK(error_of([&] {
          write_package_file(missing, b.flatbuffer, b.blob_offset, b.blob_size, b.piece_views());
        }) == missing + ": cannot write: No such file or directory");
  CHECK(std::filesystem::is_empty(dir.path()));

  // A producer that fails midway leaves the previous file and nothing else.
  const std::string path = dir / "p.fpkg";
  write_file_atomically(path, "previous");
  CHECK_THROWS_WITH(write_file_atomically_streamed(path,
                                                   [](const WriteBytes& write) {
                                                     write(std::string(10000, 'x'));
                                                     throw UserError("the source went away");
                                                   }),
                    "the source went away");
  CHECK(read_file(path) == "previous");
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    names.push_back(e.path().filename().string());
  CHECK(names == std::vector<std::string>{"p.fpkg"});
  // Streamed pieces arrive in order.
  write_file_replacing_streamed(path, [](const WriteBytes& write) {
    write("ab");
    write("");
    write("cd");
  });
  CHECK(read_file(path) == "abcd");
}
