#include "serde/package_reader.h"

#include <algorithm>
#include <cstring>

#include "core/base/content_hash.h"
#include "core/base/diagnostics.h"
#include "serde/package_layout.h"

namespace fuserc {

std::unique_ptr<PackageView> PackageView::open_file(const std::string& path) {
  std::unique_ptr<PackageView> p(new PackageView());
  p->name_ = path;
  p->mapped_ = std::make_unique<MappedFile>(path);
  p->data_ = p->mapped_->data();
  p->size_ = p->mapped_->size();
  p->check();
  return p;
}

std::unique_ptr<PackageView> PackageView::from_bytes(std::string bytes, const std::string& name) {
  std::unique_ptr<PackageView> p(new PackageView());
  p->name_ = name;
  p->owned_ = std::move(bytes);
  p->data_ = reinterpret_cast<const uint8_t*>(p->owned_.data());
  p->size_ = p->owned_.size();
  p->check();
  return p;
}

void PackageView::corrupted(const std::string& what) const {
  throw UserError(SourcePlace{name_}, "corrupted package: " + what);
}

void PackageView::check() {
  // 1. Size and identifier.
  if (size_ < 8 || std::memcmp(data_ + 4, kPackageIdentifier, 4) != 0) {
    if (size_ == 0) throw UserError(SourcePlace{name_}, "not a fuserc package: the file is empty");
    throw UserError(SourcePlace{name_},
                    "not a fuserc package (no FZPK identifier; was it written by fuserc compile?)");
  }
  // 2. Trailer.
  if (size_ < 8 + kPackageTrailerSize ||
      std::memcmp(data_ + size_ - 8, kPackageTrailerMagic, 8) != 0)
    throw UserError(SourcePlace{name_},
                    "truncated or corrupted package: the end marker is missing (" +
                        std::to_string(size_) + " bytes)");
  size_t fb_size = size_ - kPackageTrailerSize;
  // 3. Structure.
  flatbuffers::Verifier::Options vopts;
  vopts.max_depth = 32;
  vopts.max_tables = 10'000'000;
  flatbuffers::Verifier verifier(data_, fb_size, vopts);
  if (!fb::VerifyPackageBuffer(verifier))
    corrupted("the FlatBuffers verifier rejected its structure");
  package_ = fb::GetPackage(data_);
  // 4. Version.
  uint32_t version = package_->format_version();
  if (version > kPackageFormatVersion)
    throw UserError(SourcePlace{name_},
                    "the package was written by a newer fuserc (format version " +
                        std::to_string(version) + "; this fuserc reads version " +
                        std::to_string(kPackageFormatVersion) + ")");
  if (version == 0) corrupted("format version 0");
  if (!package_->metadata() || !package_->blob_data()) corrupted("a section is missing");
  // 5. Head checksum.
  blob_data_ = package_->blob_data()->data();
  blob_size_ = package_->blob_data()->size();
  size_t blob_offset = static_cast<size_t>(blob_data_ - data_);
  uint64_t want = 0;
  for (int i = 0; i < 8; ++i) want |= static_cast<uint64_t>(data_[fb_size + i]) << (8 * i);
  if (package_head_hash(data_, fb_size, blob_offset, blob_size_) != want)
    corrupted("the checksum of its structure does not match");
  metadata_ = package_->metadata_nested_root();
  if (!metadata_ || metadata_->format_version() != version)
    corrupted("the metadata section is inconsistent with the header");
  // 6. Consistency.
  check_consistency();
  // Blob verification state: one flag per distinct blob offset.
  for (const auto* k : *metadata_->kernels()) {
    verified_offsets_.push_back(k->source()->offset());
    verified_offsets_.push_back(k->ptx()->offset());
    for (const auto* b : *k->binaries()) verified_offsets_.push_back(b->cubin()->offset());
  }
  std::sort(verified_offsets_.begin(), verified_offsets_.end());
  verified_offsets_.erase(std::unique(verified_offsets_.begin(), verified_offsets_.end()),
                          verified_offsets_.end());
  verified_ = std::vector<std::atomic<bool>>(verified_offsets_.size());
}

void PackageView::check_consistency() const {
  const fb::Metadata& m = *metadata_;
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) corrupted(what);
  };
  need(m.name() && m.symbols() && m.inputs() && m.outputs() && m.program() && m.kernels() &&
           m.buffers() && m.plan() && m.provenance(),
       "a table of the metadata is missing");
  const size_t slots = m.program()->size();
  const size_t nsym = m.symbols()->size();
  const size_t nbuf = m.buffers()->size();
  const size_t nin = m.inputs()->size();
  const size_t nout = m.outputs()->size();
  const size_t nker = m.kernels()->size();
  // The program: operands refer to earlier slots only.
  for (size_t i = 0; i < slots; ++i) {
    const fb::Instr* in = m.program()->Get(static_cast<uint32_t>(i));
    int arity = 2;
    switch (in->op()) {
      case fb::Opcode::Const:
        arity = 0;
        break;
      case fb::Opcode::Symbol:
        arity = 0;
        need(in->imm() >= 0 && static_cast<size_t>(in->imm()) < nsym,
             "program slot " + std::to_string(i) + " names an unknown symbol");
        break;
      case fb::Opcode::Select:
        arity = 3;
        break;
      default:
        need(in->op() >= fb::Opcode::Add && in->op() <= fb::Opcode::Ne,
             "program slot " + std::to_string(i) + " has an unknown opcode");
    }
    uint32_t ops[3] = {in->a(), in->b(), in->c()};
    for (int k = 0; k < arity; ++k)
      need(ops[k] < i, "program slot " + std::to_string(i) + " reads a later slot");
  }
  auto slot_ok = [&](uint32_t s, const std::string& what) {
    need(s < slots, what + " refers to a slot outside the program");
  };
  auto tensors_ok = [&](const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>* ts,
                        const std::string& what) {
    for (const auto* t : *ts) {
      need(t->name() && t->shape_slots() && t->extents() && t->stride_slots(),
           what + " is incomplete");
      need(t->dtype() <= fb::DType::F64, what + " has an unknown dtype");
      for (uint32_t s : *t->shape_slots()) slot_ok(s, what);
      for (uint32_t s : *t->stride_slots()) slot_ok(s, what);
      slot_ok(t->bytes_slot(), what);
      for (const auto* e : *t->extents())
        need(e->symbol() >= -1 && e->symbol() < static_cast<int>(nsym),
             what + " names an unknown symbol");
      need(t->buffer() >= -1 && t->buffer() < static_cast<int>(nbuf),
           what + " names an unknown buffer");
      need(t->alias_input() >= -1 && t->alias_input() < static_cast<int>(nin),
           what + " aliases an unknown input");
      need(t->source_input() >= -1 && t->source_input() < static_cast<int>(nin),
           what + " names an unknown input");
    }
  };
  tensors_ok(m.inputs(), "an input");
  tensors_ok(m.outputs(), "an output");
  for (const auto* t : *m.inputs())
    need(t->extents()->size() == t->shape_slots()->size() || t->scalar(), "an input's shape");
  for (const auto* b : *m.buffers()) {
    need(b->name() != nullptr, "a buffer has no name");
    slot_ok(b->bytes_slot(), "a buffer");
    slot_ok(b->offset_slot(), "a buffer");
    need(b->kind() <= fb::BufferKind::Intermediate, "a buffer has an unknown kind");
    size_t limit = b->kind() == fb::BufferKind::Input    ? nin
                   : b->kind() == fb::BufferKind::Output ? nout
                                                         : 1u << 30;
    need(b->io_index() >= -1 && static_cast<size_t>(b->io_index() + 1) <= limit,
         "a buffer's index");
    need(b->alias_input() >= -1 && b->alias_input() < static_cast<int>(nin), "a buffer's alias");
  }
  for (const auto* k : *m.kernels()) {
    need(k->name() && k->args() && k->grid() && k->block() && k->guards() && k->binaries() &&
             k->ptx() && k->source() && k->scheduler() && k->compile_options(),
         "a kernel is incomplete");
    std::string what = "kernel " + k->name()->str();
    need(k->grid()->size() == 3 && k->block()->size() == 3, what + " has no 3-D launch dimensions");
    for (uint32_t s : *k->grid()) slot_ok(s, what);
    for (uint32_t s : *k->block()) slot_ok(s, what);
    slot_ok(k->dynamic_smem_slot(), what);
    for (const auto* g : *k->guards()) {
      slot_ok(g->slot(), what);
      need(g->message() != nullptr, what + " has a guard without a message");
    }
    for (const auto* a : *k->args()) {
      need(a->name() && a->c_type(), what + " has an incomplete argument");
      need(a->role() <= fb::ArgRole::Workspace, what + " has an argument of unknown role");
      need(a->buffer() >= -1 && a->buffer() < static_cast<int>(nbuf),
           what + " has an argument in an unknown buffer");
      need(a->input() >= -1 && a->input() < static_cast<int>(nin),
           what + " has an argument from an unknown input");
      need(a->symbol() >= -1 && a->symbol() < static_cast<int>(nsym),
           what + " has an argument of an unknown symbol");
      bool pointer = a->role() == fb::ArgRole::Input || a->role() == fb::ArgRole::Output ||
                     a->role() == fb::ArgRole::Workspace;
      need(!pointer || a->buffer() >= 0, what + " has a tensor argument without a buffer");
      need(a->role() != fb::ArgRole::Scalar || a->input() >= 0,
           what + " has a scalar without an input");
      need(a->role() != fb::ArgRole::Symbol || a->symbol() >= 0,
           what + " has a symbol argument without a symbol");
    }
    auto blob_ok = [&](const fb::BlobRef* r) {
      need(r->offset() <= blob_size_ && r->size() <= blob_size_ - r->offset(),
           what + " has a blob outside the blob data");
    };
    blob_ok(k->ptx());
    blob_ok(k->source());
    for (const auto* b : *k->binaries()) blob_ok(b->cubin());
  }
  for (const auto* l : *m.plan()) {
    need(l->variants() && l->variants()->size() > 0 && l->reads() && l->writes(),
         "a launch of the plan is incomplete");
    for (const auto* v : *l->variants()) {
      need(v->kernel() < nker, "a launch names an unknown kernel");
      slot_ok(v->condition_slot(), "a launch");
    }
    for (uint32_t b : *l->reads()) need(b < nbuf, "a launch reads an unknown buffer");
    for (uint32_t b : *l->writes()) need(b < nbuf, "a launch writes an unknown buffer");
  }
  slot_ok(m.workspace_bytes_slot(), "the workspace size");
}

std::string_view PackageView::blob(const fb::BlobRef& ref, const std::string& what) const {
  std::string_view bytes(reinterpret_cast<const char*>(blob_data_ + ref.offset()), ref.size());
  auto it = std::lower_bound(verified_offsets_.begin(), verified_offsets_.end(), ref.offset());
  std::atomic<bool>* flag = (it != verified_offsets_.end() && *it == ref.offset())
                                ? &verified_[it - verified_offsets_.begin()]
                                : nullptr;
  if (flag && flag->load(std::memory_order_acquire)) return bytes;
  if (content_hash64(bytes) != ref.hash()) corrupted("the " + what + " does not match its hash");
  if (flag) flag->store(true, std::memory_order_release);
  return bytes;
}

void PackageView::verify_all() const {
  if (content_hash64(package_->metadata()->data(), package_->metadata()->size()) !=
      package_->metadata_hash())
    corrupted("the metadata does not match its hash");
  for (const auto* k : *metadata_->kernels()) {
    std::string name = k->name()->str();
    blob(*k->source(), "source of kernel " + name);
    blob(*k->ptx(), "PTX of kernel " + name);
    for (const auto* b : *k->binaries())
      blob(*b->cubin(), "sm_" + std::to_string(b->arch()) + " cubin of kernel " + name);
  }
}

}  // namespace fuserc
