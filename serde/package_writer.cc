#include "serde/package_writer.h"

#include <cstring>
#include <string_view>

#include "core/base/content_hash.h"
#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "core/schedule/device_model.h"
#include "fuserc/version.h"
#include "serde/expr_program.h"
#include "serde/package_file.h"
#include "serde/reader/package_layout.h"

namespace fuserc {
namespace {

namespace fbs = flatbuffers;

fb::DType to_fb(DType d) {
  return static_cast<fb::DType>(static_cast<uint8_t>(d));
}

fb::ArgRole to_fb(KernelArg::Role r) {
  switch (r) {
    case KernelArg::Role::Input: return fb::ArgRole::Input;
    case KernelArg::Role::Output: return fb::ArgRole::Output;
    case KernelArg::Role::Scalar: return fb::ArgRole::Scalar;
    case KernelArg::Role::Symbol: return fb::ArgRole::Symbol;
    case KernelArg::Role::Workspace: return fb::ArgRole::Workspace;
    case KernelArg::Role::Size: return fb::ArgRole::Size;
  }
  FUSERC_UNREACHABLE("bad arg role");
}

fb::GuardKind to_fb(KernelGuard::Kind k) {
  switch (k) {
    case KernelGuard::Kind::IndexWidth: return fb::GuardKind::IndexWidth;
    case KernelGuard::Kind::SymbolRange: return fb::GuardKind::SymbolRange;
    case KernelGuard::Kind::LaunchLimit: return fb::GuardKind::LaunchLimit;
    case KernelGuard::Kind::Other: return fb::GuardKind::Other;
  }
  FUSERC_UNREACHABLE("bad guard kind");
}

fb::BufferKind to_fb(BufferInfo::Kind k) {
  switch (k) {
    case BufferInfo::Kind::Input: return fb::BufferKind::Input;
    case BufferInfo::Kind::Output: return fb::BufferKind::Output;
    case BufferInfo::Kind::Intermediate: return fb::BufferKind::Intermediate;
    case BufferInfo::Kind::Constant: return fb::BufferKind::Constant;
  }
  FUSERC_UNREACHABLE("bad buffer kind");
}

// Blobs packed back to back (no padding, so that their hashes cover every byte).
class BlobStore {
 public:
  fb::BlobRef add(const std::string& name, std::string_view bytes) {
    fb::BlobRef ref(data_.size(), bytes.size(), content_hash64(bytes));
    data_ += bytes;
    hashes_.emplace_back(name, ref.hash());
    return ref;
  }
  const std::string& data() const { return data_; }
  const std::vector<std::pair<std::string, uint64_t>>& hashes() const { return hashes_; }

 private:
  std::string data_;
  std::vector<std::pair<std::string, uint64_t>> hashes_;
};

class MetadataWriter {
 public:
  // `external`: receives the bytes of the constants that go to the external data section, in
  // the order their BlobRefs lay them out.
  MetadataWriter(const CompiledFusion& c, const PackageOptions& o, BlobStore& blobs,
                 std::vector<std::string_view>& external)
      : external_(external),
        c_(c),
        f_(c.fusion),
        options_(o),
        blobs_(blobs),
        program_(symbol_names(c.fusion)),
        interface_(interface_indices(c.fusion)) {}

  std::string build() {
    // The binding steps first: the slots a Solve step reads (k, c) come before anything that
    // uses the symbol it solves, so a runtime evaluates the program up to each step's end.
    auto bind_steps = build_bind_steps();
    auto symbols = build_symbols();
    auto inputs = build_inputs();
    auto outputs = build_outputs();
    auto buffers = build_buffers();
    auto kernels = build_kernels();
    auto plan = build_plan();
    auto constants = build_constants();
    auto matmuls = build_matmuls();
    check_device_free(c_.memory.workspace_bytes, "workspace size");
    uint32_t workspace = program_.slot(c_.memory.workspace_bytes);
    auto provenance = build_provenance();
    // The program last: every slot has been asked for by now.
    const auto& instrs = program_.instructions();
    auto program = b_.CreateVectorOfStructs(instrs.data(), instrs.size());
    auto name = b_.CreateString(f_.name);
    fb::MetadataBuilder m(b_);
    m.add_format_version(kPackageFormatVersion);
    m.add_name(name);
    m.add_symbols(symbols);
    m.add_inputs(inputs);
    m.add_outputs(outputs);
    m.add_program(program);
    m.add_kernels(kernels);
    m.add_buffers(buffers);
    m.add_plan(plan);
    m.add_workspace_bytes_slot(workspace);
    m.add_provenance(provenance);
    m.add_bind_steps(bind_steps);
    m.add_constants(constants);
    m.add_matmuls(matmuls);
    b_.Finish(m.Finish());
    return std::string(reinterpret_cast<const char*>(b_.GetBufferPointer()), b_.GetSize());
  }

 private:
  std::vector<std::string_view>& external_;
  const CompiledFusion& c_;
  const Fusion& f_;
  const PackageOptions& options_;
  BlobStore& blobs_;
  ProgramBuilder program_;
  const std::vector<int> interface_;  // per f_.inputs position: its package index
  fbs::FlatBufferBuilder b_{1 << 14};

  // The package index of a graph input: among the inputs the caller passes, or the constants.
  int interface_index(ValueId input) const { return interface_[f_.value(input).input_index]; }

  static std::vector<std::string> symbol_names(const Fusion& f) {
    std::vector<std::string> n;
    for (const auto& s : f.symbols) n.push_back(s.name);
    return n;
  }

  // Memory sizes are a function of the symbols alone: a runtime (or an independent checker)
  // sizes buffers and scratch before, or without, knowing the device.
  static void check_device_free(const Expr& e, const std::string& what) {
    for (const auto& s : free_symbols(e))
      FUSERC_CHECK(!is_device_symbol(s), what + " depends on the device (" + s + "): " + e.str());
  }

  int symbol_index(const std::string& name) const {
    for (size_t i = 0; i < f_.symbols.size(); ++i)
      if (f_.symbols[i].name == name) return static_cast<int>(i);
    FUSERC_UNREACHABLE("unknown symbol " + name);
  }

  int buffer_index(ValueId v) const {
    auto it = c_.memory.buffer_of.find(v);
    return it == c_.memory.buffer_of.end() ? -1 : it->second;
  }

  std::vector<uint32_t> slots(const std::vector<Expr>& es) {
    std::vector<uint32_t> s;
    for (const auto& e : es) s.push_back(program_.slot(e));
    return s;
  }

  fbs::Offset<fbs::Vector<const fb::BindStep*>> build_bind_steps() {
    std::vector<fb::BindStep> steps;
    for (const auto& s : f_.bind_steps) {
      const uint32_t sym = static_cast<uint32_t>(symbol_index(s.symbol));
      const uint32_t input = static_cast<uint32_t>(interface_[s.input]);
      const uint32_t dim = s.dim < 0 ? 0 : static_cast<uint32_t>(s.dim);
      uint32_t k = 0, c = 0;
      fb::BindKind kind = fb::BindKind::Extent;
      if (s.kind == SymbolBindStep::Kind::Scalar) kind = fb::BindKind::Scalar;
      if (s.kind == SymbolBindStep::Kind::Solve) {
        kind = fb::BindKind::Solve;
        k = program_.slot(s.k);
        c = program_.slot(s.c);
      }
      const uint32_t end = static_cast<uint32_t>(program_.instructions().size());
      steps.emplace_back(kind, sym, input, dim, k, c, end);
    }
    return b_.CreateVectorOfStructs(steps);
  }

  fbs::Offset<fbs::Vector<fbs::Offset<fb::Constant>>> build_constants() {
    // The external ones' places first: their BlobRefs name offsets in the section.
    std::vector<uint64_t> sizes;
    for (ValueId id : f_.inputs)
      if (f_.value(id).is_constant() && c_.external(f_.value(id)))
        sizes.push_back(f_.value(id).constant->size());
    uint64_t section_size = 0;
    const std::vector<uint64_t> offsets = layout_external(sizes, &section_size);
    std::vector<fbs::Offset<fb::Constant>> v;
    size_t next = 0;
    for (ValueId id : f_.inputs) {
      const Value& val = f_.value(id);
      if (!val.is_constant()) continue;
      std::vector<int64_t> shape;
      for (const auto& e : val.shape) shape.push_back(e.value());
      const bool external = c_.external(val);
      fb::BlobRef data;
      if (external) {
        data = fb::BlobRef(offsets[next++], val.constant->size(), val.constant->hash());
        external_.push_back(val.constant->bytes());
      } else {
        data = blobs_.add("constant:" + val.name, val.constant->bytes());
      }
      auto name = b_.CreateString(val.name);
      auto shape_v = b_.CreateVector(shape);
      v.push_back(fb::CreateConstant(b_, name, to_fb(val.dtype), shape_v, &data, external,
                                     buffer_index(id)));
    }
    return b_.CreateVector(v);
  }

  fbs::Offset<fbs::Vector<fbs::Offset<fb::Symbol>>> build_symbols() {
    std::vector<fbs::Offset<fb::Symbol>> v;
    for (const auto& s : f_.symbols)
      v.push_back(fb::CreateSymbol(b_, b_.CreateString(s.name), s.min, s.max, s.hint));
    return b_.CreateVector(v);
  }

  // `stored`: the value whose buffer holds the tensor (itself, except for an input written in
  // place that is also an output: its updated value).
  fbs::Offset<fb::Tensor> tensor(ValueId id, bool input, int alias_input, int source_input,
                                 ValueId stored) {
    const Value& val = f_.value(id);
    std::vector<fb::Extent> extents;
    if (input)
      for (const auto& e : val.shape)
        extents.emplace_back(e.is_symbol() ? symbol_index(e.name()) : e.is_const() ? -1 : -2,
                             e.is_const() ? e.value() : 0);
    auto shape = slots(val.shape);
    auto strides = slots(val.strides);
    uint32_t bytes = program_.slot(val.numel() * static_cast<int64_t>(dtype_size(val.dtype)));
    auto name = b_.CreateString(val.name);
    auto ext = b_.CreateVectorOfStructs(extents);
    auto shape_v = b_.CreateVector(shape);
    auto strides_v = b_.CreateVector(strides);
    fb::TensorBuilder t(b_);
    t.add_name(name);
    t.add_dtype(to_fb(val.dtype));
    t.add_scalar(val.scalar_input);
    t.add_extents(ext);
    t.add_shape_slots(shape_v);
    t.add_stride_slots(strides_v);
    t.add_bytes_slot(bytes);
    t.add_alias_input(alias_input);
    t.add_buffer(buffer_index(stored));
    t.add_source_input(source_input);
    if (input && !val.sets_symbol.empty()) t.add_symbol(symbol_index(val.sets_symbol));
    return t.Finish();
  }

  fbs::Offset<fbs::Vector<fbs::Offset<fb::Tensor>>> build_inputs() {
    std::vector<fbs::Offset<fb::Tensor>> v;
    for (ValueId id : f_.inputs)
      if (!f_.value(id).is_constant()) v.push_back(tensor(id, true, -1, -1, id));
    return b_.CreateVector(v);
  }

  fbs::Offset<fbs::Vector<fbs::Offset<fb::Tensor>>> build_outputs() {
    std::vector<fbs::Offset<fb::Tensor>> v;
    for (ValueId id : f_.outputs) {
      // An input written in place and listed as an output is read back from its buffer after
      // the run (its updated value), not copied from the caller's input.
      ValueId stored = f_.updated_value(id);
      int alias = -1;
      for (const auto& [out, in] : f_.aliases)
        if (out == stored) alias = interface_index(in);
      // An output that is a graph input is copied from it; a constant's from its buffer.
      int source = stored == id && f_.value(id).is_input() && !f_.value(id).is_constant()
                       ? interface_index(id)
                       : -1;
      v.push_back(tensor(id, false, alias, source, stored));
    }
    return b_.CreateVector(v);
  }

  fbs::Offset<fbs::Vector<fbs::Offset<fb::Buffer>>> build_buffers() {
    std::vector<fbs::Offset<fb::Buffer>> v;
    for (const auto& buf : c_.memory.buffers) {
      check_device_free(buf.bytes, "buffer size");
      check_device_free(buf.offset, "buffer offset");
      auto name = b_.CreateString(f_.value(buf.value).name);
      uint32_t bytes = program_.slot(buf.bytes);
      uint32_t offset =
          program_.slot(buf.kind == BufferInfo::Kind::Intermediate ? buf.offset : Expr(0));
      v.push_back(fb::CreateBuffer(b_, name, to_fb(buf.kind), buf.io_index,
                                   to_fb(f_.value(buf.value).dtype), bytes, offset,
                                   buf.alias_input));
    }
    return b_.CreateVector(v);
  }

  fbs::Offset<fb::Kernel> kernel(const KernelSummary& k) {
    std::vector<fbs::Offset<fb::Param>> params;
    for (const auto& [key, value] : k.scheduler_params)
      params.push_back(fb::CreateParam(b_, b_.CreateString(key), b_.CreateString(value)));
    std::vector<fbs::Offset<fb::KernelArg>> args;
    for (const auto& a : k.args) {
      int buffer = -1, input = -1, symbol = -1;
      uint32_t slot = 0;
      if (a.role == KernelArg::Role::Symbol)
        symbol = symbol_index(a.symbol);
      else if (a.role == KernelArg::Role::Scalar)
        input = interface_index(a.value);
      else if (a.role == KernelArg::Role::Size)
        slot = program_.slot(a.size);
      else if (a.role != KernelArg::Role::Workspace)
        buffer = buffer_index(a.value);
      args.push_back(fb::CreateKernelArg(b_, b_.CreateString(a.name), to_fb(a.role), to_fb(a.dtype),
                                         buffer, input, symbol, b_.CreateString(a.c_type),
                                         a.allocation, slot));
    }
    std::vector<uint32_t> grid = {program_.slot(k.grid[0]), program_.slot(k.grid[1]),
                                  program_.slot(k.grid[2])};
    std::vector<uint32_t> block = {program_.slot(k.block[0]), program_.slot(k.block[1]),
                                   program_.slot(k.block[2])};
    uint32_t smem = program_.slot(k.dynamic_shared_bytes);
    std::vector<fbs::Offset<fb::Guard>> guards;
    for (const auto& g : k.guards)
      guards.push_back(fb::CreateGuard(b_, to_fb(g.kind), program_.slot(g.condition),
                                       b_.CreateString(g.message)));
    std::vector<fbs::Offset<fb::ArchBinary>> binaries;
    for (const auto& bin : k.binaries) {
      fb::BlobRef cubin =
          blobs_.add("kernel:" + k.name + ":sm_" + std::to_string(bin.arch), bin.cubin);
      binaries.push_back(fb::CreateArchBinary(b_, bin.arch, &cubin, bin.registers,
                                              bin.spill_store_bytes, bin.spill_load_bytes,
                                              bin.shared_bytes, bin.local_bytes));
    }
    fb::BlobRef source = blobs_.add("kernel:" + k.name + ":source", k.source);
    fb::BlobRef ptx = blobs_.add("kernel:" + k.name + ":ptx", k.ptx);
    std::vector<fbs::Offset<fbs::String>> options;
    for (const auto& o : k.compile_options) options.push_back(b_.CreateString(o));
    auto name = b_.CreateString(k.name);
    auto sched = b_.CreateString(scheduler_name(k.scheduler));
    auto params_v = b_.CreateVector(params);
    auto comment = b_.CreateString(k.comment);
    auto args_v = b_.CreateVector(args);
    auto grid_v = b_.CreateVector(grid);
    auto block_v = b_.CreateVector(block);
    auto guards_v = b_.CreateVector(guards);
    auto bins_v = b_.CreateVector(binaries);
    auto opts_v = b_.CreateVector(options);
    std::vector<fbs::Offset<fb::Allocation>> allocs;
    for (const auto& al : k.allocations) {
      check_device_free(al.bytes, "scratch of kernel " + k.name);
      allocs.push_back(fb::CreateAllocation(b_, program_.slot(al.bytes), al.zero_init));
    }
    auto allocs_v = b_.CreateVector(allocs);
    std::vector<fbs::Offset<fb::LaunchValue>> values;
    for (const auto& lv : k.launch_values)
      values.push_back(
          fb::CreateLaunchValue(b_, b_.CreateString(lv.name), program_.slot(lv.value)));
    auto values_v = b_.CreateVector(values);
    auto note = b_.CreateString(k.variant_note);
    fb::KernelBuilder kb(b_);
    kb.add_name(name);
    kb.add_scheduler(sched);
    kb.add_params(params_v);
    kb.add_comment(comment);
    kb.add_args(args_v);
    kb.add_grid(grid_v);
    kb.add_block(block_v);
    kb.add_dynamic_smem_slot(smem);
    kb.add_allocations(allocs_v);
    kb.add_guards(guards_v);
    kb.add_index64(k.index64);
    kb.add_uses_rng(k.uses_rng);
    kb.add_block_reduction(k.block_reduction);
    kb.add_grid_reduction(k.grid_reduction);
    kb.add_cooperative(k.cooperative);
    kb.add_min_compute_capability(k.min_compute_capability);
    kb.add_binaries(bins_v);
    kb.add_ptx(&ptx);
    kb.add_ptx_arch(k.ptx_arch);
    kb.add_source(&source);
    kb.add_compile_options(opts_v);
    kb.add_variant_note(note);
    kb.add_launch_values(values_v);
    return kb.Finish();
  }

  fbs::Offset<fbs::Vector<fbs::Offset<fb::Kernel>>> build_kernels() {
    std::vector<fbs::Offset<fb::Kernel>> v;
    for (const auto& k : c_.kernels) v.push_back(kernel(k));
    return b_.CreateVector(v);
  }

  fbs::Offset<fb::MatmulOperand> matmul_operand(const MatmulLayout& l) {
    const int buffer = l.value == kNoValue ? -1 : buffer_index(l.value);
    for (const Expr* e :
         {&l.row_stride, &l.col_stride, &l.batch_stride, &l.outer_stride, &l.offset})
      check_device_free(*e, "a matrix product's strides");
    return fb::CreateMatmulOperand(
        b_, buffer, to_fb(l.dtype), program_.slot(l.row_stride), program_.slot(l.col_stride),
        program_.slot(l.batch_stride), program_.slot(l.outer_stride),
        l.offset.is_const(0) ? -1 : static_cast<int32_t>(program_.slot(l.offset)));
  }

  fbs::Offset<fbs::Vector<fbs::Offset<fb::Matmul>>> build_matmuls() {
    std::vector<fbs::Offset<fb::Matmul>> v;
    for (const MatmulCall& c : c_.matmuls) {
      auto name = b_.CreateString(c.name);
      auto comment = b_.CreateString(c.comment);
      auto a = matmul_operand(c.a), b = matmul_operand(c.b), out = matmul_operand(c.c);
      auto bias = matmul_operand(c.bias);
      fb::MatmulBuilder mb(b_);
      mb.add_name(name);
      mb.add_comment(comment);
      mb.add_m_slot(program_.slot(c.m));
      mb.add_n_slot(program_.slot(c.n));
      mb.add_k_slot(program_.slot(c.k));
      mb.add_batch_slot(program_.slot(c.batch));
      mb.add_outer_slot(program_.slot(c.outer));
      mb.add_a(a);
      mb.add_b(b);
      mb.add_c(out);
      mb.add_bias(bias);
      mb.add_epilogue(static_cast<fb::MatmulEpilogue>(static_cast<uint8_t>(c.epilogue)));
      mb.add_allow_tf32(c.allow_tf32);
      mb.add_workspace_slot(program_.slot(c.workspace_bytes));
      v.push_back(mb.Finish());
    }
    return b_.CreateVector(v);
  }

  fbs::Offset<fbs::Vector<fbs::Offset<fb::Launch>>> build_plan() {
    std::vector<fbs::Offset<fb::Launch>> v;
    for (const auto& step : c_.plan) {
      std::vector<fbs::Offset<fb::LaunchVariant>> variants;
      for (size_t i = 0; i < step.kernels.size(); ++i) {
        // Which variant runs may depend on the device; the buffers it reads do not.
        auto reason = b_.CreateString(i < step.reasons.size() ? step.reasons[i] : "");
        variants.push_back(fb::CreateLaunchVariant(b_, static_cast<uint32_t>(step.kernels[i]),
                                                   program_.slot(step.conditions[i]), reason));
      }
      std::vector<uint32_t> reads, writes;
      for (ValueId x : step_reads(c_, step))
        reads.push_back(static_cast<uint32_t>(buffer_index(x)));
      for (ValueId x : step_writes(c_, step))
        writes.push_back(static_cast<uint32_t>(buffer_index(x)));
      auto variants_v = b_.CreateVector(variants);
      auto reads_v = b_.CreateVector(reads);
      auto writes_v = b_.CreateVector(writes);
      v.push_back(fb::CreateLaunch(b_, variants_v, reads_v, writes_v, step.library));
    }
    return b_.CreateVector(v);
  }

  fbs::Offset<fb::Provenance> build_provenance() {
    std::vector<fbs::Offset<fb::SectionHash>> hashes;
    for (const auto& [name, h] : blobs_.hashes())
      hashes.push_back(fb::CreateSectionHash(b_, b_.CreateString(name), h));
    std::vector<fbs::Offset<fbs::String>> options;
    for (const auto& o : options_.options) options.push_back(b_.CreateString(o));
    auto version = b_.CreateString(FUSERC_VERSION_STRING);
    auto nvrtc = b_.CreateString(c_.nvrtc_version);
    auto archs = b_.CreateVector(c_.archs);
    auto opts = b_.CreateVector(options);
    auto hashes_v = b_.CreateVector(hashes);
    return fb::CreateProvenance(b_, version, nvrtc, archs, opts, hashes_v);
  }
};

}  // namespace

namespace {

// A package's parts: the finished FlatBuffer (the blob range in it) and the external pieces.
struct PackageParts {
  std::string flatbuffer;
  size_t blob_offset = 0, blob_size = 0;
  std::vector<std::string_view> external;  // views into the compiled fusion's constants
};

PackageParts build_package(const CompiledFusion& c, const PackageOptions& options) {
  PackageParts parts;
  BlobStore blobs;
  std::string metadata = MetadataWriter(c, options, blobs, parts.external).build();
  fbs::FlatBufferBuilder b(metadata.size() + blobs.data().size() + 1024);
  // The blob data first: FlatBuffers builds back to front, so it ends the buffer.
  auto blob_data =
      b.CreateVector(reinterpret_cast<const uint8_t*>(blobs.data().data()), blobs.data().size());
  // The metadata is a nested FlatBuffer holding 8-byte structs: align it to 8 in the file.
  b.ForceVectorAlignment(metadata.size(), sizeof(uint8_t), alignof(uint64_t));
  auto meta = b.CreateVector(reinterpret_cast<const uint8_t*>(metadata.data()), metadata.size());
  fb::PackageBuilder p(b);
  p.add_format_version(kPackageFormatVersion);
  p.add_metadata(meta);
  p.add_metadata_hash(content_hash64(metadata));
  p.add_blob_data(blob_data);
  fb::FinishPackageBuffer(b, p.Finish());
  const uint8_t* buf = b.GetBufferPointer();
  const fb::Package* pkg = fb::GetPackage(buf);
  parts.blob_offset = static_cast<size_t>(pkg->blob_data()->data() - buf);
  parts.blob_size = pkg->blob_data()->size();
  parts.flatbuffer.assign(reinterpret_cast<const char*>(buf), b.GetSize());
  return parts;
}

}  // namespace

std::string serialize_package(const CompiledFusion& c, const PackageOptions& options) {
  PackageParts p = build_package(c, options);
  return assemble_package(p.flatbuffer, p.blob_offset, p.blob_size, p.external);
}

void write_package(const std::string& path, const CompiledFusion& c, const PackageOptions& options,
                   bool durable) {
  PackageParts p = build_package(c, options);
  if (durable)
    write_package_file(path, p.flatbuffer, p.blob_offset, p.blob_size, p.external);
  else
    replace_package_file(path, p.flatbuffer, p.blob_offset, p.blob_size, p.external);
}

}  // namespace fuserc
