#include "runtime/run_package.h"

#include <cstring>
#include <set>

#include "core/base/diagnostics.h"
#include "runtime/launch_plan.h"

namespace fuserc {
namespace {

// Device memory released when the run ends, whatever happens.
class Allocations {
 public:
  explicit Allocations(Device& d) : device_(d) {}
  ~Allocations() {
    for (void* p : owned_) device_.release(p);
  }
  uint8_t* get(size_t bytes) {
    void* p = device_.allocate(bytes);
    owned_.push_back(p);
    return static_cast<uint8_t*>(p);
  }

 private:
  Device& device_;
  std::vector<void*> owned_;
};

std::vector<int64_t> shape_of(const fb::Tensor& t, const Binding& b) {
  std::vector<int64_t> s;
  for (uint32_t slot : *t.shape_slots()) s.push_back(b.slot(slot));
  return s;
}

// An input laid out in its declared strides: the element at index (i0, i1, ...) goes to
// offset sum(ik * stride_k). Returns the bytes to copy to the device. Strides that place two
// elements at one address (a stride of 0: a broadcast input) hold one value there: elements
// of the file that differ there cannot be laid out, and are refused naming the input.
std::string strided_layout(const HostTensor& t, const std::vector<int64_t>& strides,
                           const std::string& package, const std::string& name) {
  size_t size = dtype_size(t.dtype());
  int64_t extent = t.numel() == 0 ? 0 : 1;
  // An empty tensor spans no bytes (an extent of 0 would make the span negative).
  for (size_t d = 0; d < strides.size(); ++d)
    if (t.numel() > 0) extent += (t.shape()[d] - 1) * strides[d];
  std::string bytes(static_cast<size_t>(extent) * size, '\0');
  std::vector<bool> written(static_cast<size_t>(extent), false);
  std::vector<int64_t> idx(t.rank(), 0);
  for (int64_t e = 0; e < t.numel(); ++e) {
    int64_t off = 0;
    for (int d = 0; d < t.rank(); ++d) off += idx[d] * strides[d];
    char* at = bytes.data() + off * size;
    const char* value = reinterpret_cast<const char*>(t.data()) + e * size;
    if (written[off] && std::memcmp(at, value, size) != 0) {
      std::string where;
      for (int d = 0; d < t.rank(); ++d) where += (d ? ", " : "") + std::to_string(idx[d]);
      throw UserError(SourcePlace{package},
                      "input '" + name + "': its strides place element [" + where +
                          "] where an element of another value lies (a stride of 0 repeats "
                          "one value); the values given for it must be equal there");
    }
    written[off] = true;
    std::memcpy(at, value, size);
    for (int d = t.rank() - 1; d >= 0; --d) {
      if (++idx[d] < t.shape()[d]) break;
      idx[d] = 0;
    }
  }
  return bytes;
}

// The inverse: the element at index (i0, i1, ...) read from offset sum(ik * stride_k) of
// `bytes` into a dense tensor (an output written in place through an input's strides).
void gather_strided(const std::string& bytes, const std::vector<int64_t>& strides,
                    HostTensor& out) {
  size_t size = dtype_size(out.dtype());
  std::vector<int64_t> idx(out.rank(), 0);
  for (int64_t e = 0; e < out.numel(); ++e) {
    int64_t off = 0;
    for (int d = 0; d < out.rank(); ++d) off += idx[d] * strides[d];
    std::memcpy(out.data() + e * size, bytes.data() + off * size, size);
    for (int d = out.rank() - 1; d >= 0; --d) {
      if (++idx[d] < out.shape()[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, HostTensor>> run_package(Executable& exe, Device& device,
                                                            const TensorMap& inputs,
                                                            const std::string& inputs_file) {
  const fb::Metadata& m = exe.metadata();
  std::shared_ptr<const Binding> binding =
      exe.bind_inputs(inputs, inputs_file, device.properties());
  const Binding& b = *binding;
  Allocations mem(device);

  // Buffers.
  std::vector<uint8_t*> buffer(m.buffers()->size(), nullptr);
  std::vector<const HostTensor*> input_tensor;
  for (const auto* t : *m.inputs()) input_tensor.push_back(&inputs.at(t->name()->str()));
  uint8_t* workspace = nullptr;
  int64_t workspace_bytes = b.slot(m.workspace_bytes_slot());
  if (workspace_bytes > 0) workspace = mem.get(static_cast<size_t>(workspace_bytes));
  // Constants: read in place where the device reads host memory and they are aligned (the
  // emulator, a mapped package), else copied to the device for this run.
  std::vector<const void*> constant_ptr(exe.num_constants(), nullptr);
  for (uint32_t c = 0; c < constant_ptr.size(); ++c) {
    std::string_view bytes = exe.constant_bytes(c);
    if (device.reads_host_memory() &&
        reinterpret_cast<uintptr_t>(bytes.data()) % kPlanAlignment == 0) {
      constant_ptr[c] = bytes.data();
    } else if (!bytes.empty()) {
      uint8_t* p = mem.get(bytes.size());
      device.to_device(p, bytes.data(), bytes.size());
      constant_ptr[c] = p;
    }
  }
  for (uint32_t i = 0; i < m.buffers()->size(); ++i) {
    const fb::Buffer* buf = m.buffers()->Get(i);
    if (buf->kind() == fb::BufferKind::Constant)
      buffer[i] = const_cast<uint8_t*>(static_cast<const uint8_t*>(constant_ptr[buf->io_index()]));
    if (buf->kind() == fb::BufferKind::Input) {
      const fb::Tensor* t = m.inputs()->Get(buf->io_index());
      if (t->scalar()) continue;
      const HostTensor& host = *input_tensor[buf->io_index()];
      if (t->stride_slots()->size() > 0) {
        std::vector<int64_t> strides;
        for (uint32_t s : *t->stride_slots()) strides.push_back(b.slot(s));
        std::string bytes =
            strided_layout(host, strides, inputs_file.empty() ? exe.package().name() : inputs_file,
                           t->name()->str());
        buffer[i] = mem.get(bytes.size());
        device.to_device(buffer[i], bytes.data(), bytes.size());
      } else {
        buffer[i] = mem.get(host.nbytes());
        device.to_device(buffer[i], host.data(), host.nbytes());
      }
    }
  }
  for (uint32_t i = 0; i < m.buffers()->size(); ++i) {
    const fb::Buffer* buf = m.buffers()->Get(i);
    if (buf->kind() == fb::BufferKind::Output) {
      if (buf->alias_input() >= 0) {
        buffer[i] = buffer[m.inputs()->Get(buf->alias_input())->buffer()];
      } else {
        buffer[i] = mem.get(static_cast<size_t>(b.slot(buf->bytes_slot())));
      }
    } else if (buf->kind() == fb::BufferKind::Intermediate) {
      buffer[i] = workspace + b.slot(buf->offset_slot());
    }
  }

  // Launches: the plan of this binding (runtime/launch_plan.h); each launch's scratch memory is
  // its own allocation here (zeroed when the kernel needs it so), to catch overruns.
  LaunchPlan plan(exe, b);
  std::vector<const void*> input_ptr(m.inputs()->size(), nullptr);
  std::vector<void*> output_ptr(m.outputs()->size(), nullptr);
  for (uint32_t i = 0; i < m.inputs()->size(); ++i) {
    const fb::Tensor* t = m.inputs()->Get(i);
    input_ptr[i] = t->scalar() ? input_tensor[i]->data() : buffer[t->buffer()];
  }
  for (uint32_t i = 0; i < m.buffers()->size(); ++i)
    if (m.buffers()->Get(i)->kind() == fb::BufferKind::Output)
      output_ptr[m.buffers()->Get(i)->io_index()] = buffer[i];
  for (const PlannedLaunch& l : plan.launches()) {
    if (l.matmul >= 0) {  // a library step
      const PlannedMatmul& mm = plan.matmuls()[static_cast<size_t>(l.matmul)];
      ArgBases bases;
      bases.inputs = input_ptr.data();
      bases.constants = constant_ptr.data();
      bases.outputs = output_ptr.data();
      bases.workspace = workspace;
      device.matmul(mm.problem, plan.pointer(mm.a, bases), plan.pointer(mm.b, bases),
                    mm.problem.has_bias ? plan.pointer(mm.bias, bases) : nullptr,
                    const_cast<void*>(plan.pointer(mm.c, bases)));
      continue;
    }
    std::vector<void*> scratch;
    for (uint32_t a = 0; a < l.num_allocations; ++a) {
      const PlannedAllocation& al = plan.allocations()[l.first_allocation + a];
      scratch.push_back(mem.get(al.bytes));
      if (al.zero_init) device.fill_zero(scratch.back(), al.bytes);
    }
    ArgBases bases;
    bases.inputs = input_ptr.data();
    bases.constants = constant_ptr.data();
    bases.outputs = output_ptr.data();
    bases.workspace = workspace;
    bases.scratch = scratch.data();
    std::vector<uint64_t> storage(l.num_args);
    std::vector<void*> args(l.num_args);
    plan.write_args(l, bases, storage.data());
    for (uint32_t a = 0; a < l.num_args; ++a) args[a] = &storage[a];
    device.launch(exe, l.kernel, l.dims, args.data());
  }
  device.synchronize();

  // Outputs.
  std::vector<std::pair<std::string, HostTensor>> out;
  std::set<std::string> seen;
  for (const auto* t : *m.outputs()) {
    std::string name = t->name()->str();
    if (!seen.insert(name).second) continue;
    if (t->source_input() >= 0) {
      out.emplace_back(name, *input_tensor[t->source_input()]);
      continue;
    }
    HostTensor host(static_cast<DType>(t->dtype()), shape_of(*t, b));
    if (m.buffers()->Get(t->buffer())->kind() == fb::BufferKind::Constant) {
      std::string_view bytes =
          exe.constant_bytes(static_cast<uint32_t>(m.buffers()->Get(t->buffer())->io_index()));
      if (bytes.size() != host.nbytes())
        throw UserError(SourcePlace{exe.package().name()},
                        "corrupted package: constant output " + quote(name) + " has " +
                            std::to_string(bytes.size()) + " bytes");
      if (!bytes.empty()) std::memcpy(host.data(), bytes.data(), bytes.size());
      out.emplace_back(name, std::move(host));
      continue;
    }
    const fb::Buffer* buf = m.buffers()->Get(t->buffer());
    const fb::Tensor* target =
        buf->alias_input() >= 0 ? m.inputs()->Get(buf->alias_input()) : nullptr;
    if (target && target->stride_slots()->size() > 0 && host.numel() > 0) {
      std::vector<int64_t> strides;
      for (uint32_t slot : *target->stride_slots()) strides.push_back(b.slot(slot));
      int64_t extent = 1;
      for (size_t d = 0; d < strides.size(); ++d) extent += (host.shape()[d] - 1) * strides[d];
      std::string bytes(static_cast<size_t>(extent) * dtype_size(host.dtype()), '\0');
      device.to_host(bytes.data(), buffer[t->buffer()], bytes.size());
      gather_strided(bytes, strides, host);
    } else {
      device.to_host(host.data(), buffer[t->buffer()], host.nbytes());
    }
    out.emplace_back(name, std::move(host));
  }
  return out;
}

}  // namespace fuserc
