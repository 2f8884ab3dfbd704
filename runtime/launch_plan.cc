#include "runtime/launch_plan.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/base/diagnostics.h"
#include "core/base/half.h"
#include "core/base/host_tensor.h"

namespace fuserc {
namespace {

uint64_t align_up(uint64_t x) {
  return (x + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
}

ParamType param_type(const std::string& c_type, const std::string& kernel) {
  if (c_type == "float") return ParamType::F32;
  if (c_type == "double") return ParamType::F64;
  if (c_type == "int") return ParamType::I32;
  if (c_type == "long long") return ParamType::I64;
  if (c_type == "bool") return ParamType::Bool;
  throw UserError("kernel " + quote(kernel) + " has a scalar parameter of type " + quote(c_type) +
                  ", which this runtime does not know (a package from a newer fuserc?)");
}

// A size the bound program computed, refused when negative or beyond kMaxPlanBytes (only a
// corrupted package or a shape no device could hold gets there), so that no sum of sizes
// overflows and no allocation is attempted for an absurd size.
uint64_t checked_size(int64_t v, const std::string& file, const std::string& what) {
  if (v < 0 || static_cast<uint64_t>(v) > kMaxPlanBytes)
    throw UserError(SourcePlace{file}, "cannot launch: the " + what + " is " + std::to_string(v) +
                                           " bytes, outside [0, 2^56]");
  return static_cast<uint64_t>(v);
}

// The launch limits of every CUDA device (compute capability 3.0 and later).
void check_dims(const LaunchDims& d, const std::string& file, const std::string& kernel) {
  const uint64_t threads = uint64_t{d.block[0]} * d.block[1] * d.block[2];
  if (d.grid[0] > 2147483647u || d.grid[1] > 65535u || d.grid[2] > 65535u || d.block[0] > 1024u ||
      d.block[1] > 1024u || d.block[2] > 64u || threads > 1024u)
    throw UserError(SourcePlace{file}, "cannot launch kernel " + quote(kernel) + ": " +
                                           describe_dims(d) + " is beyond the CUDA limits");
}

// A float parameter from a double, without the undefined behaviour of an out-of-range cast.
float to_float(double v) {
  if (std::isfinite(v) && std::fabs(v) > static_cast<double>(FLT_MAX))
    return v > 0 ? HUGE_VALF : -HUGE_VALF;
  return static_cast<float>(v);
}

}  // namespace

void write_scalar_param(DType from, const void* value, ParamType to, uint64_t* out) {
  double f = 0;
  int64_t i = 0;
  bool floating = true;
  switch (from) {
    case DType::Bool: {
      uint8_t b;
      std::memcpy(&b, value, 1);
      i = b != 0;
      floating = false;
      break;
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, value, 4);
      i = v;
      floating = false;
      break;
    }
    case DType::I64: std::memcpy(&i, value, 8), floating = false; break;
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, value, 2);
      f = f16_bits_to_float(h);
      break;
    }
    case DType::BF16: {
      uint16_t h;
      std::memcpy(&h, value, 2);
      f = bf16_bits_to_float(h);
      break;
    }
    case DType::F32: {
      float v;
      std::memcpy(&v, value, 4);
      f = v;
      break;
    }
    case DType::F64: std::memcpy(&f, value, 8); break;
  }
  *out = 0;
  switch (to) {
    case ParamType::F32: {
      float v = floating ? to_float(f) : static_cast<float>(i);
      std::memcpy(out, &v, sizeof v);
      return;
    }
    case ParamType::F64: {
      double v = floating ? f : static_cast<double>(i);
      std::memcpy(out, &v, sizeof v);
      return;
    }
    case ParamType::I32: {
      int32_t v = static_cast<int32_t>(floating ? float_to_int64_saturating(f) : i);
      std::memcpy(out, &v, sizeof v);
      return;
    }
    case ParamType::I64: {
      int64_t v = floating ? float_to_int64_saturating(f) : i;
      std::memcpy(out, &v, sizeof v);
      return;
    }
    case ParamType::Bool: {
      bool v = floating ? f != 0.0 : i != 0;
      std::memcpy(out, &v, sizeof v);
      return;
    }
  }
}

ArgSource LaunchPlan::buffer_source(const fb::Metadata& m, const Binding& b,
                                    const std::string& file, uint32_t index, bool written) const {
  ArgSource s;
  const fb::Buffer* buf = m.buffers()->Get(index);
  if (buf->kind() == fb::BufferKind::Input) {
    s.kind = ArgSource::Kind::Input;
    s.index = static_cast<uint32_t>(buf->io_index());
  } else if (buf->kind() == fb::BufferKind::Constant) {
    if (written)
      throw UserError(SourcePlace{file},
                      "corrupted package: a step writes constant " + quote(buf->name()->str()));
    s.kind = ArgSource::Kind::Constant;
    s.index = static_cast<uint32_t>(buf->io_index());
  } else if (buf->kind() == fb::BufferKind::Output && buf->alias_input() >= 0) {
    s.kind = ArgSource::Kind::Input;  // written in place
    s.index = static_cast<uint32_t>(buf->alias_input());
  } else if (buf->kind() == fb::BufferKind::Output) {
    s.kind = ArgSource::Kind::Output;
    s.index = static_cast<uint32_t>(buf->io_index());
  } else {
    s.kind = ArgSource::Kind::Workspace;
    s.offset = checked_size(b.slot(buf->offset_slot()), file, "workspace offset");
    // An intermediate lies inside the intermediates' region of the workspace.
    const uint64_t bytes = checked_size(b.slot(buf->bytes_slot()), file, "buffer size");
    if (s.offset > intermediate_bytes_ || bytes > intermediate_bytes_ - s.offset)
      throw UserError(SourcePlace{file}, "corrupted package: buffer " +
                                             quote(buf->name()->str()) +
                                             " lies outside the workspace");
  }
  return s;
}

void LaunchPlan::plan_matmul(const fb::Metadata& m, const Binding& b, const std::string& file,
                             uint32_t l, uint64_t& scratch_bytes) {
  const fb::Matmul* mm = m.matmuls()->Get(static_cast<uint32_t>(m.plan()->Get(l)->matmul()));
  PlannedMatmul p;
  p.launch = l;
  p.name = mm->name()->str();
  MatmulProblem& q = p.problem;
  q.m = b.slot(mm->m_slot());
  q.n = b.slot(mm->n_slot());
  q.k = b.slot(mm->k_slot());
  q.batch = b.slot(mm->batch_slot());
  q.outer = b.slot(mm->outer_slot());
  if (q.m < 0 || q.n < 0 || q.k < 0 || q.batch < 0 || q.outer < 0)
    throw UserError(SourcePlace{file}, "corrupted package: library step " + quote(p.name) +
                                           " has a negative size");
  if (q.m == 0 || q.n == 0 || q.batch == 0 || q.outer == 0) return;  // nothing to compute
  auto operand = [&](const fb::MatmulOperand* o, MatmulOperand& to, ArgSource& src, bool out) {
    to.dtype = static_cast<DType>(o->dtype());
    to.row_stride = b.slot(o->row_stride_slot());
    to.col_stride = b.slot(o->col_stride_slot());
    to.batch_stride = b.slot(o->batch_stride_slot());
    to.outer_stride = b.slot(o->outer_stride_slot());
    src = buffer_source(m, b, file, static_cast<uint32_t>(o->buffer()), out);
    if (o->offset_slot() >= 0)
      src.view_bytes = checked_size(b.slot(static_cast<uint32_t>(o->offset_slot())), file,
                                    "library operand offset") *
                       dtype_size(to.dtype);
  };
  operand(mm->a(), q.a, p.a, false);
  operand(mm->b(), q.b, p.b, false);
  operand(mm->c(), q.c, p.c, true);
  q.has_bias = mm->bias()->buffer() >= 0;
  if (q.has_bias) operand(mm->bias(), q.bias, p.bias, false);
  q.epilogue = static_cast<MatmulEpilogue>(static_cast<uint8_t>(mm->epilogue()));
  q.allow_tf32 = mm->allow_tf32();
  p.workspace_bytes = checked_size(b.slot(mm->workspace_slot()), file, "library workspace");
  scratch_bytes = std::max(scratch_bytes, p.workspace_bytes);
  PlannedLaunch launch;
  launch.launch = l;
  launch.kernel = kLibraryStep;
  launch.matmul = static_cast<int32_t>(matmuls_.size());
  matmuls_.push_back(std::move(p));
  launches_.push_back(launch);
}

const void* LaunchPlan::pointer(const ArgSource& s, const ArgBases& bases) const {
  const uint8_t* base = nullptr;
  switch (s.kind) {
    case ArgSource::Kind::Input: base = static_cast<const uint8_t*>(bases.inputs[s.index]); break;
    case ArgSource::Kind::Constant:
      base = static_cast<const uint8_t*>(bases.constants[s.index]);
      break;
    case ArgSource::Kind::Output: base = static_cast<const uint8_t*>(bases.outputs[s.index]); break;
    case ArgSource::Kind::Workspace: base = bases.workspace + s.offset; break;
    default: FUSERC_UNREACHABLE("a library operand that is not a buffer");
  }
  return base && s.view_bytes ? base + s.view_bytes : base;  // an empty operand may be null
}

std::string describe_dims(const LaunchDims& d) {
  auto three = [](const uint32_t* v) {
    return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
  };
  return "grid " + three(d.grid) + ", block " + three(d.block) + ", " +
         std::to_string(d.dynamic_shared_bytes) + " B dynamic shared memory";
}

LaunchPlan::LaunchPlan(const Executable& exe, const Binding& b) {
  const fb::Metadata& m = exe.metadata();
  const std::string& file = exe.package().name();
  intermediate_bytes_ = checked_size(b.slot(m.workspace_bytes_slot()), file, "workspace size");
  scratch_offset_ = align_up(intermediate_bytes_);
  uint64_t scratch_bytes = 0;
  for (uint32_t l = 0; l < m.plan()->size(); ++l) {
    uint32_t ki = b.kernel_of[l];
    if (ki == kLibraryStep) {
      plan_matmul(m, b, file, l, scratch_bytes);
      continue;
    }
    const fb::Kernel* k = m.kernels()->Get(ki);
    PlannedLaunch p;
    p.launch = l;
    p.kernel = ki;
    bool empty = false;
    for (int d = 0; d < 3; ++d) {
      int64_t g = b.slot(k->grid()->Get(d));
      int64_t t = b.slot(k->block()->Get(d));
      if (g <= 0 || t <= 0) empty = true;
      p.dims.grid[d] = static_cast<uint32_t>(std::clamp<int64_t>(g, 0, UINT32_MAX));
      p.dims.block[d] = static_cast<uint32_t>(std::clamp<int64_t>(t, 0, UINT32_MAX));
    }
    if (empty) continue;  // an empty tensor: nothing to launch
    // Clamped values are above every limit, so check_dims refuses them.
    check_dims(p.dims, file, k->name()->str());
    const uint64_t smem = checked_size(b.slot(k->dynamic_smem_slot()), file,
                                       "dynamic shared memory of kernel " + k->name()->str());
    if (smem > UINT32_MAX)
      throw UserError(SourcePlace{file}, "cannot launch kernel " + quote(k->name()->str()) + ": " +
                                             std::to_string(smem) +
                                             " bytes of dynamic shared memory");
    p.dims.dynamic_shared_bytes = static_cast<uint32_t>(smem);

    // Scratch: partials after the intermediates, counters in their own region; both restart
    // at offset 0 for every launch.
    p.first_allocation = static_cast<uint32_t>(allocations_.size());
    uint64_t partials = 0, counters = 0;
    if (k->allocations())
      for (const auto* al : *k->allocations()) {
        PlannedAllocation a;
        a.bytes = checked_size(b.slot(al->bytes_slot()), file, "scratch size");
        a.zero_init = al->zero_init();
        uint64_t& end = a.zero_init ? counters : partials;
        a.offset = end;
        end += align_up(a.bytes);
        allocations_.push_back(a);
      }
    p.num_allocations = static_cast<uint32_t>(allocations_.size()) - p.first_allocation;
    scratch_bytes = std::max(scratch_bytes, partials);
    counter_bytes_ = std::max(counter_bytes_, counters);

    p.first_arg = static_cast<uint32_t>(args_.size());
    for (const auto* arg : *k->args()) {
      ArgSource s;
      switch (arg->role()) {
        case fb::ArgRole::Input:
        case fb::ArgRole::Output:
          s = buffer_source(m, b, file, static_cast<uint32_t>(arg->buffer()),
                            arg->role() == fb::ArgRole::Output);
          break;
        case fb::ArgRole::Workspace: {
          const PlannedAllocation& a = allocations_[p.first_allocation + arg->allocation()];
          s.kind = a.zero_init ? ArgSource::Kind::Counters : ArgSource::Kind::Scratch;
          s.index = static_cast<uint32_t>(arg->allocation());
          s.offset = a.zero_init ? a.offset : scratch_offset_ + a.offset;
          break;
        }
        case fb::ArgRole::Scalar: {
          s.kind = ArgSource::Kind::Scalar;
          s.index = static_cast<uint32_t>(arg->input());
          s.from = static_cast<DType>(m.inputs()->Get(arg->input())->dtype());
          s.type = param_type(arg->c_type()->str(), k->name()->str());
          break;
        }
        case fb::ArgRole::Symbol: {
          int64_t v = b.symbols[arg->symbol()];
          s.kind = ArgSource::Kind::Value;
          if (arg->dtype() == fb::DType::I32) {
            int32_t v32 = static_cast<int32_t>(v);
            uint32_t u;
            std::memcpy(&u, &v32, 4);
            s.bits = u;
            s.bytes = 4;
          } else {
            std::memcpy(&s.bits, &v, 8);
          }
          break;
        }
        case fb::ArgRole::Size: {  // a size literal: its slot's value as `long long`
          int64_t v = b.slot(arg->slot());
          s.kind = ArgSource::Kind::Value;
          std::memcpy(&s.bits, &v, 8);
          break;
        }
      }
      args_.push_back(s);
    }
    p.num_args = static_cast<uint32_t>(args_.size()) - p.first_arg;
    max_args_ = std::max(max_args_, p.num_args);
    launches_.push_back(p);
  }
  workspace_bytes_ = scratch_bytes ? scratch_offset_ + scratch_bytes : intermediate_bytes_;

  for (uint32_t j = 0; j < m.outputs()->size(); ++j) {
    const fb::Tensor* t = m.outputs()->Get(j);
    OutputSource o;
    o.bytes = checked_size(b.slot(t->bytes_slot()), file, "output size");
    if (t->source_input() >= 0) {
      o.from_input = t->source_input();
    } else if (t->buffer() >= 0) {
      const fb::Buffer* buf = m.buffers()->Get(static_cast<uint32_t>(t->buffer()));
      if (buf->kind() == fb::BufferKind::Input)
        o.from_input = buf->io_index();
      else if (buf->kind() == fb::BufferKind::Constant)
        o.from_constant = buf->io_index();
      else if (buf->alias_input() >= 0)
        o.from_input = buf->alias_input();
      else if (buf->kind() == fb::BufferKind::Output && buf->io_index() != static_cast<int>(j))
        o.from_output = buf->io_index();
    }
    outputs_.push_back(o);
  }
}

void LaunchPlan::write_args(const PlannedLaunch& l, const ArgBases& bases,
                            uint64_t* storage) const {
  for (uint32_t a = 0; a < l.num_args; ++a) {
    const ArgSource& s = args_[l.first_arg + a];
    uint64_t& slot = storage[a];
    const void* p = nullptr;
    switch (s.kind) {
      case ArgSource::Kind::Input: p = bases.inputs[s.index]; break;
      case ArgSource::Kind::Constant: p = bases.constants[s.index]; break;
      case ArgSource::Kind::Output: p = bases.outputs[s.index]; break;
      case ArgSource::Kind::Workspace: p = bases.workspace + s.offset; break;
      case ArgSource::Kind::Scratch:
        p = bases.scratch ? bases.scratch[s.index] : bases.workspace + s.offset;
        break;
      case ArgSource::Kind::Counters:
        p = bases.scratch ? bases.scratch[s.index] : bases.counters + s.offset;
        break;
      case ArgSource::Kind::Scalar:
        write_scalar_param(s.from, bases.inputs[s.index], s.type, &slot);
        continue;
      case ArgSource::Kind::Value: slot = s.bits; continue;
    }
    std::memcpy(&slot, &p, sizeof p);
  }
}

}  // namespace fuserc
