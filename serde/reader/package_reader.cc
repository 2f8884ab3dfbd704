#include "serde/reader/package_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>

#include "core/base/content_hash.h"
#include "core/base/device_props.h"
#include "core/base/diagnostics.h"
#include "serde/reader/package_layout.h"

namespace fuserc {

namespace {

// Packages this small are read whole; larger ones trailer first, then just their head.
constexpr size_t kFirstRead = 16 * 1024;

// pread until done; false on error or end of file.
bool pread_all(int fd, uint8_t* dst, size_t length, size_t offset) {
  while (length > 0) {
    ssize_t n = ::pread(fd, dst, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    dst += n;
    offset += static_cast<size_t>(n);
    length -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::unique_ptr<PackageView> PackageView::open_file(const std::string& path) {
  std::unique_ptr<PackageView> p(new PackageView());
  p->name_ = path;
  p->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (p->fd_ < 0)
    throw UserError(SourcePlace{path}, std::string("cannot read: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(p->fd_, &st) != 0 || !S_ISREG(st.st_mode))
    throw UserError(SourcePlace{path}, "cannot read: not a regular file");
  p->size_ = static_cast<size_t>(st.st_size);
  auto cannot_read = [&] {
    throw UserError(SourcePlace{path}, std::string("cannot read: ") + std::strerror(errno));
  };
  if (p->size_ <= kFirstRead) {
    // Small: one read (whatever it holds; external data is still used only through a mapping).
    p->storage_.reset(new uint8_t[std::max<size_t>(p->size_, 1)]);
    if (!pread_all(p->fd_, p->storage_.get(), p->size_, 0)) cannot_read();
    p->data_ = p->storage_.get();
    p->check_frame(p->data_, p->data_ + p->size_, p->size_);
    p->open_head(p->head_size_);
    return p;
  }
  // The trailer says where the head ends: read it, then the head up to the blobs in one go
  // (just enough to tell a foreign file from a damaged package when the trailer is unusable).
  uint8_t tail[kPackageTrailerSize];
  if (!pread_all(p->fd_, tail, kPackageTrailerSize, p->size_ - kPackageTrailerSize)) cannot_read();
  PackageTrailer trailer;
  uint64_t head_end = 0;
  if (read_trailer(tail + kPackageTrailerSize, kPackageTrailerSize, p->size_, trailer) ==
      TrailerRead::Ok)
    head_end = package_head_end(trailer, p->size_);
  const size_t first =
      head_end >= 8 ? static_cast<size_t>(std::max<uint64_t>(trailer.blob_offset, 8)) : 8;
  p->storage_.reset(new uint8_t[std::max<size_t>(static_cast<size_t>(head_end), first)]);
  if (!pread_all(p->fd_, p->storage_.get(), first, 0)) cannot_read();
  p->data_ = p->storage_.get();
  p->check_frame(p->data_, tail + kPackageTrailerSize, kPackageTrailerSize);
  p->open_head(first);
  return p;
}

std::unique_ptr<PackageView> PackageView::from_bytes(std::string bytes, const std::string& name) {
  std::unique_ptr<PackageView> p(new PackageView());
  p->name_ = name;
  p->owned_ = std::move(bytes);
  p->data_ = reinterpret_cast<const uint8_t*>(p->owned_.data());
  p->size_ = p->owned_.size();
  p->check_frame(p->data_, p->data_ + p->size_, p->size_);
  p->external_data_ = p->data_ + p->external_offset_;
  p->open_head(p->head_size_);
  return p;
}

std::unique_ptr<PackageView> PackageView::view_bytes(const uint8_t* data, size_t size,
                                                     const std::string& name) {
  std::unique_ptr<PackageView> p(new PackageView());
  p->name_ = name;
  p->size_ = size;
  p->check_frame(data, data + size, size);
  p->external_data_ = data + p->external_offset_;
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    // FlatBuffers reads its tables in place: a head not 8-byte aligned is read from a copy
    // (the external data is not copied: its users copy what they need aligned).
    p->storage_.reset(new uint8_t[p->head_size_]);
    std::memcpy(p->storage_.get(), data, p->head_size_);
    data = p->storage_.get();
  }
  p->data_ = data;
  p->open_head(p->head_size_);
  return p;
}

PackageView::~PackageView() {
  if (mapping_) ::munmap(mapping_, mapping_size_);
  if (fd_ >= 0) ::close(fd_);
}

void PackageView::corrupted(const std::string& what) const {
  throw UserError(SourcePlace{name_}, "corrupted package: " + what);
}

// Makes [offset, offset + length) of the file resident (open_file reads lazily).
void PackageView::read_range(size_t offset, size_t length) const {
  if (fd_ < 0 || length == 0) return;
  if (!pread_all(fd_, storage_.get() + offset, length, offset))
    throw UserError(SourcePlace{name_}, "cannot read: the file changed or is unreadable");
}

void PackageView::check_frame(const uint8_t* first, const uint8_t* tail_end,
                              size_t tail_available) {
  // 1. Size and identifier.
  if (size_ < 8 || std::memcmp(first + 4, kPackageIdentifier, 4) != 0) {
    if (size_ == 0) throw UserError(SourcePlace{name_}, "not a fuserc package: the file is empty");
    throw UserError(SourcePlace{name_},
                    "not a fuserc package (no FZPK identifier; was it written by fuserc compile?)");
  }
  // 2. Trailer.
  if (size_ < 64 + kPackageTrailerSizeV1)
    throw UserError(SourcePlace{name_}, "truncated package (" + std::to_string(size_) + " bytes)");
  PackageTrailer trailer;
  switch (read_trailer(tail_end, tail_available, size_, trailer)) {
    case TrailerRead::Ok: break;
    case TrailerRead::Newer:
      throw UserError(SourcePlace{name_},
                      "the package was written by a newer fuserc (its trailer is FZPKEND" +
                          std::string(1, static_cast<char>(tail_end[-1])) +
                          "; this fuserc reads FZPKEND1 and FZPKEND2)");
    case TrailerRead::Missing:
      throw UserError(SourcePlace{name_},
                      "truncated or corrupted package: the end marker is missing (" +
                          std::to_string(size_) + " bytes)");
  }
  const uint64_t head_end = package_head_end(trailer, size_);
  if (head_end < 8) corrupted("its trailer points outside the file");
  head_size_ = static_cast<size_t>(head_end);
  blob_offset_ = static_cast<size_t>(trailer.blob_offset);
  blob_size_ = static_cast<size_t>(trailer.blob_size);
  external_offset_ = static_cast<size_t>(trailer.external_offset);
  external_size_ = static_cast<size_t>(trailer.external_size);
  head_hash_ = trailer.head_hash;
  old_trailer_ = trailer.trailer_size == kPackageTrailerSizeV1;
}

void PackageView::open_head(size_t resident) {
  // The head: everything before the external section but the blobs. From format 3 on, what
  // follows the blobs is zero padding: hashed as zeros, not read (verify_all checks it).
  if (resident < blob_offset_) read_range(resident, blob_offset_ - resident);
  const size_t tail = blob_offset_ + blob_size_;
  uint64_t hash = 0;
  if (old_trailer_) {
    if (tail < head_size_ && resident < head_size_) {
      size_t from = std::max(tail, resident);
      read_range(from, head_size_ - from);
    }
    hash = package_head_hash(data_, head_size_, blob_offset_, blob_size_);
  } else {
    if (storage_ && resident < head_size_ && tail < head_size_) {
      size_t from = std::max(tail, resident);
      std::memset(storage_.get() + from, 0, head_size_ - from);  // (its bytes, as they must be)
    }
    hash = package_head_hash(data_, tail, blob_offset_, blob_size_, head_size_ - tail);
  }
  // 3. Checksum of the head.
  if (hash != head_hash_) corrupted("the checksum of its structure does not match");
  // 4. Structure and version.
  flatbuffers::Verifier::Options vopts;
  vopts.max_depth = 32;
  vopts.max_tables = 10'000'000;
  flatbuffers::Verifier verifier(data_, head_size_, vopts);
  if (!fb::VerifyPackageBuffer(verifier))
    corrupted("the FlatBuffers verifier rejected its structure");
  package_ = fb::GetPackage(data_);
  uint32_t version = package_->format_version();
  if (version > kPackageFormatVersion)
    throw UserError(SourcePlace{name_},
                    "the package was written by a newer fuserc (format version " +
                        std::to_string(version) + "; this fuserc reads version " +
                        std::to_string(kPackageFormatVersion) + ")");
  if (version == 0) corrupted("format version 0");
  if (old_trailer_ && version >= 3)
    corrupted("its trailer (FZPKEND1) is older than its format version " + std::to_string(version));
  if (version < 3 && external_size_ > 0)
    corrupted("external data in a package of format version " + std::to_string(version));
  if (!package_->metadata() || !package_->blob_data()) corrupted("a section is missing");
  if (static_cast<size_t>(package_->blob_data()->data() - data_) != blob_offset_ ||
      package_->blob_data()->size() != blob_size_)
    corrupted("its trailer and its structure disagree about the blobs");
  metadata_ = package_->metadata_nested_root();
  const auto* meta_bytes = package_->metadata();
  if (metadata_ && reinterpret_cast<uintptr_t>(meta_bytes->data()) % alignof(uint64_t) != 0) {
    // The nested metadata holds 8-byte structs (the program): read an aligned copy when the
    // bytes are not 8-byte aligned (packages written before the writer aligned them).
    aligned_metadata_.reset(new uint64_t[meta_bytes->size() / sizeof(uint64_t) + 1]);
    std::memcpy(aligned_metadata_.get(), meta_bytes->data(), meta_bytes->size());
    metadata_ = flatbuffers::GetRoot<fb::Metadata>(aligned_metadata_.get());
  }
  if (!metadata_ || metadata_->format_version() != version)
    corrupted("the metadata section is inconsistent with the header");
  // 5. Consistency.
  check_consistency(version);
  // Empty blobs need no flag (and may share an offset with the next blob).
  auto add = [](CheckedRefs& refs, const fb::BlobRef* r) {
    if (r->size()) refs.keys.push_back({r->offset(), r->size(), r->hash()});
  };
  for (const auto* k : *metadata_->kernels()) {
    add(blobs_, k->source());
    add(blobs_, k->ptx());
    for (const auto* b : *k->binaries()) add(blobs_, b->cubin());
  }
  if (metadata_->constants())
    for (const auto* c : *metadata_->constants())
      add(c->external() ? external_ : blobs_, c->data());
  blobs_.build();
  external_.build();
}

bool PackageView::RefKey::operator<(const RefKey& o) const {
  if (offset != o.offset) return offset < o.offset;
  if (size != o.size) return size < o.size;
  return hash < o.hash;
}

bool PackageView::RefKey::operator==(const RefKey& o) const {
  return offset == o.offset && size == o.size && hash == o.hash;
}

void PackageView::CheckedRefs::build() {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  done.reset(new std::atomic<bool>[keys.size()]());
}

std::atomic<bool>& PackageView::CheckedRefs::flag(const fb::BlobRef& ref) const {
  const RefKey key{ref.offset(), ref.size(), ref.hash()};
  auto it = std::lower_bound(keys.begin(), keys.end(), key);
  FUSERC_CHECK(it != keys.end() && *it == key, "a blob or constant not in this package");
  return done[it - keys.begin()];
}

// Messages are built only when a check fails: this runs on every load.
void PackageView::check_consistency(uint32_t version) const {
  const fb::Metadata& m = *metadata_;
  auto need = [&](bool ok, const char* what) {
    if (!ok) corrupted(what);
  };
  need(m.name() && m.symbols() && m.inputs() && m.outputs() && m.program() && m.kernels() &&
           m.buffers() && m.plan() && m.provenance(),
       "a table of the metadata is missing");
  // Vectors of 8-byte structs: the verifier checks only their 4-byte length's alignment, so a
  // damaged offset can place the elements at an address no fb::Instr or fb::Extent may be read
  // from (the metadata itself starts 8-byte aligned: see open()). An empty vector (a scalar
  // input's extents) is not aligned by the writer and reads nothing.
  auto aligned = [](const auto* v) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(v->data())>>;
    return v->size() == 0 || reinterpret_cast<uintptr_t>(v->data()) % alignof(T) == 0;
  };
  need(aligned(m.program()), "the size program is misaligned");
  const size_t slots = m.program()->size();
  const size_t nsym = m.symbols()->size();
  const size_t nbuf = m.buffers()->size();
  const size_t nin = m.inputs()->size();
  const size_t nout = m.outputs()->size();
  const size_t nker = m.kernels()->size();
  for (const auto* s : *m.symbols()) need(s->name() != nullptr, "a symbol has no name");
  // The program: operands refer to earlier slots only.
  for (uint32_t i = 0; i < slots; ++i) {
    const fb::Instr* in = m.program()->Get(i);
    int arity = 2;
    switch (in->op()) {
      case fb::Opcode::Const: arity = 0; break;
      case fb::Opcode::Symbol:
        arity = 0;
        need(in->imm() >= 0 && static_cast<size_t>(in->imm()) < nsym,
             "a program slot names an unknown symbol");
        break;
      case fb::Opcode::Select: arity = 3; break;
      case fb::Opcode::Device:
        arity = 0;
        need(in->imm() >= 0 && in->imm() < kNumDeviceProps,
             "a program slot reads an unknown device property");
        break;
      default:
        need(in->op() >= fb::Opcode::Add && in->op() <= fb::Opcode::Ne,
             "a program slot has an unknown opcode");
    }
    const uint32_t ops[3] = {in->a(), in->b(), in->c()};
    for (int k = 0; k < arity; ++k) need(ops[k] < i, "a program slot reads a later slot");
  }
  auto slot_ok = [&](uint32_t s) {
    need(s < slots, "a size refers to a slot outside the program");
  };
  auto index_ok = [&](int v, size_t n, const char* what) {
    need(v >= -1 && v < static_cast<int>(n), what);
  };
  auto tensors_ok = [&](const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>* ts) {
    for (const auto* t : *ts) {
      need(t->name() && t->shape_slots() && t->extents() && t->stride_slots(),
           "a tensor of the interface is incomplete");
      need(aligned(t->extents()), "a tensor's extents are misaligned");
      need(t->dtype() <= fb::DType::F64, "a tensor has an unknown dtype");
      for (uint32_t s : *t->shape_slots()) slot_ok(s);
      for (uint32_t s : *t->stride_slots()) slot_ok(s);
      slot_ok(t->bytes_slot());
      for (const auto* e : *t->extents())
        need(e->symbol() == -2 || (e->symbol() >= -1 && e->symbol() < static_cast<int>(nsym)),
             "an extent names an unknown symbol");
      index_ok(t->buffer(), nbuf, "a tensor names an unknown buffer");
      index_ok(t->alias_input(), nin, "a tensor aliases an unknown input");
      index_ok(t->source_input(), nin, "a tensor names an unknown input");
    }
  };
  tensors_ok(m.inputs());
  tensors_ok(m.outputs());
  for (const auto* t : *m.inputs())
    need(t->scalar() || t->extents()->size() == t->shape_slots()->size(),
         "an input's declared shape and its sizes disagree");
  for (const auto* b : *m.buffers()) {
    need(b->name() != nullptr, "a buffer has no name");
    slot_ok(b->bytes_slot());
    slot_ok(b->offset_slot());
    need(b->kind() <= fb::BufferKind::Constant, "a buffer has an unknown kind");
    if (b->kind() == fb::BufferKind::Constant)
      need(m.constants() && b->io_index() >= 0 &&
               static_cast<size_t>(b->io_index()) < m.constants()->size(),
           "a buffer's constant index");
    if (b->kind() == fb::BufferKind::Input)
      need(b->io_index() >= 0 && static_cast<size_t>(b->io_index()) < nin,
           "a buffer's input index");
    if (b->kind() == fb::BufferKind::Output)
      need(b->io_index() >= 0 && static_cast<size_t>(b->io_index()) < nout,
           "a buffer's output index");
    index_ok(b->alias_input(), nin, "a buffer aliases an unknown input");
  }
  for (const auto* k : *m.kernels()) {
    need(k->name() && k->args() && k->grid() && k->block() && k->guards() && k->binaries() &&
             k->ptx() && k->source() && k->scheduler() && k->compile_options(),
         "a kernel is incomplete");
    need(k->grid()->size() == 3 && k->block()->size() == 3,
         "a kernel has no 3-D launch dimensions");
    for (uint32_t s : *k->grid()) slot_ok(s);
    for (uint32_t s : *k->block()) slot_ok(s);
    slot_ok(k->dynamic_smem_slot());
    if (k->allocations())
      for (const auto* al : *k->allocations()) slot_ok(al->bytes_slot());
    if (k->launch_values())
      for (const auto* v : *k->launch_values()) {
        need(v->name() != nullptr, "a kernel has a launch value without a name");
        slot_ok(v->slot());
      }
    for (const auto* g : *k->guards()) {
      slot_ok(g->slot());
      need(g->message() != nullptr, "a kernel has a guard without a message");
    }
    for (const auto* a : *k->args()) {
      need(a->name() && a->c_type(), "a kernel has an incomplete argument");
      need(a->role() <= fb::ArgRole::Size, "a kernel argument has an unknown role");
      need(a->role() != fb::ArgRole::Size || a->slot() < slots,
           "a size argument refers to a slot outside the program");
      index_ok(a->buffer(), nbuf, "a kernel argument is in an unknown buffer");
      index_ok(a->input(), nin, "a kernel argument comes from an unknown input");
      index_ok(a->symbol(), nsym, "a kernel argument names an unknown symbol");
      bool tensor = a->role() == fb::ArgRole::Input || a->role() == fb::ArgRole::Output;
      need(!tensor || a->buffer() >= 0, "a tensor argument has no buffer");
      need(a->role() != fb::ArgRole::Workspace ||
               (k->allocations() && a->allocation() >= 0 &&
                static_cast<size_t>(a->allocation()) < k->allocations()->size()),
           "a workspace argument has no allocation");
      need(a->role() != fb::ArgRole::Scalar || a->input() >= 0, "a scalar argument has no input");
      need(a->role() != fb::ArgRole::Symbol || a->symbol() >= 0, "a symbol argument has no symbol");
    }
    auto blob_ok = [&](const fb::BlobRef* r) {
      need(r->offset() <= blob_size_ && r->size() <= blob_size_ - r->offset(),
           "a kernel has a blob outside the blob data");
    };
    blob_ok(k->ptx());
    blob_ok(k->source());
    for (const auto* b : *k->binaries()) blob_ok(b->cubin());
  }
  const size_t nmat = m.matmuls() ? m.matmuls()->size() : 0;
  if (m.matmuls()) {
    need(version >= 4, "library steps in a package of format version 3 or older");
    auto operand_ok = [&](const fb::MatmulOperand* o, bool optional) {
      need(o != nullptr, "a library step has no operand");
      need(optional ? o->buffer() >= -1 : o->buffer() >= 0, "a library step has no buffer");
      need(o->buffer() < static_cast<int>(nbuf), "a library step names an unknown buffer");
      need(o->dtype() >= fb::DType::F16 && o->dtype() <= fb::DType::F64,
           "a library step's operand is not floating point");
      slot_ok(o->row_stride_slot());
      slot_ok(o->col_stride_slot());
      slot_ok(o->batch_stride_slot());
      slot_ok(o->outer_stride_slot());
      need(o->offset_slot() >= -1, "a library step's operand has a bad offset");
      if (o->offset_slot() >= 0) slot_ok(static_cast<uint32_t>(o->offset_slot()));
    };
    for (const auto* mm : *m.matmuls()) {
      need(mm->name() && mm->comment(), "a library step has no name");
      for (uint32_t s : {mm->m_slot(), mm->n_slot(), mm->k_slot(), mm->batch_slot(),
                         mm->outer_slot(), mm->workspace_slot()})
        slot_ok(s);
      operand_ok(mm->a(), false);
      operand_ok(mm->b(), false);
      operand_ok(mm->c(), false);
      operand_ok(mm->bias(), true);
      need(mm->epilogue() <= fb::MatmulEpilogue::GeluTanh,
           "a library step has an unknown epilogue");
    }
  }
  for (const auto* l : *m.plan()) {
    const bool library = l->matmul() >= 0;
    need(l->matmul() >= -1 && l->matmul() < static_cast<int>(nmat),
         "a launch names an unknown library step");
    need(l->variants() && (library ? l->variants()->size() == 0 : l->variants()->size() > 0) &&
             l->reads() && l->writes(),
         "a launch of the plan is incomplete");
    for (const auto* v : *l->variants()) {
      need(v->kernel() < nker, "a launch names an unknown kernel");
      slot_ok(v->condition_slot());
    }
    for (uint32_t b : *l->reads()) need(b < nbuf, "a launch reads an unknown buffer");
    for (uint32_t b : *l->writes()) need(b < nbuf, "a launch writes an unknown buffer");
  }
  slot_ok(m.workspace_bytes_slot());
  check_constants(version);
}

void PackageView::check_constants(uint32_t version) const {
  const auto* constants = metadata_->constants();
  if (!constants) return;
  auto need = [&](bool ok, const char* what) {
    if (!ok) corrupted(what);
  };
  need(version >= 3, "a package older than format version 3 has constants");
  // Bytes per element of each fb::DType.
  static constexpr uint64_t kDTypeBytes[] = {1, 4, 8, 2, 2, 4, 8};
  static_assert(sizeof kDTypeBytes / sizeof kDTypeBytes[0] ==
                static_cast<size_t>(fb::DType::MAX) + 1);
  const size_t nbuf = metadata_->buffers()->size();
  for (const auto* c : *constants) {
    need(c->name() && c->data(), "a constant is incomplete");
    need(c->dtype() <= fb::DType::MAX, "a constant has an unknown dtype");
    // A shape of 8-byte integers: the verifier checks only its length's alignment.
    need(!c->shape() || c->shape()->size() == 0 ||
             reinterpret_cast<uintptr_t>(c->shape()->data()) % alignof(int64_t) == 0,
         "a constant's shape is misaligned");
    uint64_t count = 1;
    bool fits = true;
    if (c->shape())
      for (int64_t e : *c->shape()) {
        const uint64_t u = static_cast<uint64_t>(e);
        if (e < 0 || (u != 0 && count > UINT64_MAX / u)) {
          fits = false;
          break;
        }
        count *= u;
      }
    const uint64_t elem = kDTypeBytes[static_cast<size_t>(c->dtype())];
    const fb::BlobRef* r = c->data();
    need(fits && count <= UINT64_MAX / elem && count * elem == r->size(),
         "a constant's shape and the size of its data disagree");
    if (c->external()) {
      need(r->offset() <= external_size_ && r->size() <= external_size_ - r->offset(),
           "a constant's data lies outside the external data");
      need(r->offset() % kExternalAlignment == 0, "a constant's external data is misaligned");
    } else {
      need(r->offset() <= blob_size_ && r->size() <= blob_size_ - r->offset(),
           "a constant's data lies outside the blob data");
    }
    need(c->buffer() >= -1 && c->buffer() < static_cast<int>(nbuf),
         "a constant names an unknown buffer");
  }
}

std::string_view PackageView::blob(const fb::BlobRef& ref, const std::string& what) const {
  const uint8_t* start = data_ + blob_offset_ + ref.offset();
  std::string_view bytes(reinterpret_cast<const char*>(start), ref.size());
  if (ref.size() == 0) {
    if (content_hash64(bytes) != ref.hash()) corrupted("the " + what + " does not match its hash");
    return bytes;
  }
  std::atomic<bool>& flag = blobs_.flag(ref);
  if (flag.load(std::memory_order_acquire)) return bytes;
  std::lock_guard<std::mutex> lock(mutex_);
  if (flag.load(std::memory_order_relaxed)) return bytes;
  read_range(blob_offset_ + ref.offset(), ref.size());
  if (content_hash64(bytes) != ref.hash()) corrupted("the " + what + " does not match its hash");
  flag.store(true, std::memory_order_release);
  return bytes;
}

std::string_view PackageView::constant_data(const fb::Constant& c) const {
  if (!c.external()) return blob(*c.data(), "data of constant " + quote(c.name()->str()));
  return external_piece(*c.data(), c.name()->str());
}

bool PackageView::constant_data_aligned(const fb::Constant& c) const {
  uintptr_t at;
  if (!c.external()) {
    at = reinterpret_cast<uintptr_t>(data_ + blob_offset_ + c.data()->offset());
  } else if (fd_ >= 0) {
    // Mapped from a page boundary (a multiple of 4096, so of 256) at or below the section.
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    at = static_cast<uintptr_t>(external_offset_ % page + c.data()->offset());
  } else {
    at = reinterpret_cast<uintptr_t>(external_data_.load(std::memory_order_acquire) +
                                     c.data()->offset());
  }
  return at % kExternalAlignment == 0;
}

// Called with external_mutex_ held.
const uint8_t* PackageView::external_data() const {
  const uint8_t* p = external_data_.load(std::memory_order_acquire);
  if (p) return p;
  FUSERC_CHECK(fd_ >= 0 && external_size_ > 0, "external data of a package without any");
  // The file must still be the one whose head was checked (a shorter one would fault).
  struct stat st;
  if (::fstat(fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) != size_)
    throw UserError(SourcePlace{name_}, "cannot read: the file changed or is unreadable");
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t from = external_offset_ / page * page;
  const size_t length = static_cast<size_t>(external_offset_ + external_size_ - from);
  void* m = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd_, static_cast<off_t>(from));
  if (m == MAP_FAILED)
    throw UserError(SourcePlace{name_},
                    std::string("cannot map its external data: ") + std::strerror(errno));
  mapping_ = m;
  mapping_size_ = length;
  p = static_cast<const uint8_t*>(m) + (external_offset_ - from);
  external_data_.store(p, std::memory_order_release);
  return p;
}

std::string_view PackageView::external_piece(const fb::BlobRef& ref,
                                             const std::string& name) const {
  auto mismatch = [&] {
    corrupted("the data of constant " + quote(name) + " does not match its hash");
  };
  if (ref.size() == 0) {
    if (content_hash64(std::string_view()) != ref.hash()) mismatch();
    return std::string_view();
  }
  std::atomic<bool>& flag = external_.flag(ref);
  auto view = [&](const uint8_t* base) {
    return std::string_view(reinterpret_cast<const char*>(base + ref.offset()), ref.size());
  };
  if (flag.load(std::memory_order_acquire))
    return view(external_data_.load(std::memory_order_acquire));
  // One piece is mapped and hashed at a time; blobs are read meanwhile (under mutex_).
  std::lock_guard<std::mutex> lock(external_mutex_);
  std::string_view bytes = view(external_data());
  if (flag.load(std::memory_order_relaxed)) return bytes;
  if (content_hash64(bytes) != ref.hash()) mismatch();
  flag.store(true, std::memory_order_release);
  return bytes;
}

// The bytes of the external section outside every piece (alignment padding) must be zero, so
// that they too are covered by a check.
void PackageView::check_external_padding() const {
  if (external_size_ == 0) return;
  const uint8_t* base;
  {
    std::lock_guard<std::mutex> lock(external_mutex_);
    base = external_data();
  }
  auto zero = [&](uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; ++i)
      if (base[i] != 0) corrupted("the padding of its external data is not zero");
  };
  uint64_t covered = 0;  // keys are sorted by offset
  for (const RefKey& k : external_.keys) {
    if (k.offset > covered) zero(covered, k.offset);
    covered = std::max(covered, k.offset + k.size);
  }
  zero(covered, external_size_);
}

void PackageView::verify_all() const {
  if (content_hash64(package_->metadata()->data(), package_->metadata()->size()) !=
      package_->metadata_hash())
    corrupted("the metadata does not match its hash");
  // Format 3: the bytes after the blobs up to the external section are zero (the head hash
  // took them as zeros without reading them).
  const size_t tail = blob_offset_ + blob_size_;
  if (!old_trailer_ && tail < head_size_) {
    std::string bytes(head_size_ - tail, '\0');
    if (fd_ >= 0) {
      if (!pread_all(fd_, reinterpret_cast<uint8_t*>(bytes.data()), bytes.size(), tail))
        throw UserError(SourcePlace{name_}, "cannot read: the file changed or is unreadable");
    } else {
      std::memcpy(bytes.data(), data_ + tail, bytes.size());
    }
    for (char c : bytes)
      if (c != 0) corrupted("the padding after its blobs is not zero");
  }
  for (const auto* k : *metadata_->kernels()) {
    std::string name = k->name()->str();
    blob(*k->source(), "source of kernel " + name);
    blob(*k->ptx(), "PTX of kernel " + name);
    for (const auto* b : *k->binaries())
      blob(*b->cubin(), "sm_" + std::to_string(b->arch()) + " cubin of kernel " + name);
  }
  if (metadata_->constants())
    for (const auto* c : *metadata_->constants()) constant_data(*c);
  check_external_padding();
}

}  // namespace fuserc
