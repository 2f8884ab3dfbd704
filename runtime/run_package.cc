#include "runtime/run_package.h"

#include <cstring>
#include <set>

#include "core/base/diagnostics.h"

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
// offset sum(ik * stride_k). Returns the bytes to copy to the device.
std::string strided_layout(const HostTensor& t, const std::vector<int64_t>& strides) {
  size_t size = dtype_size(t.dtype());
  int64_t extent = t.numel() == 0 ? 0 : 1;
  for (size_t d = 0; d < strides.size(); ++d) extent += (t.shape()[d] - 1) * strides[d];
  std::string bytes(static_cast<size_t>(extent) * size, '\0');
  std::vector<int64_t> idx(t.rank(), 0);
  for (int64_t e = 0; e < t.numel(); ++e) {
    int64_t off = 0;
    for (int d = 0; d < t.rank(); ++d) off += idx[d] * strides[d];
    std::memcpy(bytes.data() + off * size, t.data() + e * size, size);
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

// The value of a scalar input in the kernel parameter's type.
void scalar_value(const HostTensor& t, const std::string& c_type, uint64_t* storage) {
  if (c_type == "float") {
    float v = t.load_f32(0);
    std::memcpy(storage, &v, sizeof v);
  } else if (c_type == "double") {
    double v = t.load_f64(0);
    std::memcpy(storage, &v, sizeof v);
  } else if (c_type == "int") {
    int32_t v = static_cast<int32_t>(t.load_i64(0));
    std::memcpy(storage, &v, sizeof v);
  } else if (c_type == "long long") {
    int64_t v = t.load_i64(0);
    std::memcpy(storage, &v, sizeof v);
  } else if (c_type == "bool") {
    bool v = t.load_bool(0);
    std::memcpy(storage, &v, sizeof v);
  } else {
    throw InternalError("scalar parameter of unsupported type " + c_type);
  }
}

}  // namespace

std::vector<std::pair<std::string, HostTensor>> run_package(Executable& exe, Device& device,
                                                            const TensorMap& inputs,
                                                            const std::string& inputs_file) {
  const fb::Metadata& m = exe.metadata();
  std::shared_ptr<const Binding> binding = exe.bind_inputs(inputs, inputs_file);
  const Binding& b = *binding;
  Allocations mem(device);

  // Buffers.
  std::vector<uint8_t*> buffer(m.buffers()->size(), nullptr);
  std::vector<const HostTensor*> input_tensor;
  for (const auto* t : *m.inputs()) input_tensor.push_back(&inputs.at(t->name()->str()));
  uint8_t* workspace = nullptr;
  int64_t workspace_bytes = b.slot(m.workspace_bytes_slot());
  if (workspace_bytes > 0) workspace = mem.get(static_cast<size_t>(workspace_bytes));
  for (uint32_t i = 0; i < m.buffers()->size(); ++i) {
    const fb::Buffer* buf = m.buffers()->Get(i);
    if (buf->kind() == fb::BufferKind::Input) {
      const fb::Tensor* t = m.inputs()->Get(buf->io_index());
      if (t->scalar()) continue;
      const HostTensor& host = *input_tensor[buf->io_index()];
      if (t->stride_slots()->size() > 0) {
        std::vector<int64_t> strides;
        for (uint32_t s : *t->stride_slots()) strides.push_back(b.slot(s));
        std::string bytes = strided_layout(host, strides);
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

  // Launches.
  for (uint32_t l = 0; l < m.plan()->size(); ++l) {
    uint32_t ki = b.kernel_of[l];
    const fb::Kernel* k = m.kernels()->Get(ki);
    LaunchDims dims;
    bool empty = false;
    for (int d = 0; d < 3; ++d) {
      int64_t g = b.slot(k->grid()->Get(d));
      int64_t t = b.slot(k->block()->Get(d));
      if (g <= 0 || t <= 0) empty = true;
      dims.grid[d] = static_cast<uint32_t>(std::max<int64_t>(g, 0));
      dims.block[d] = static_cast<uint32_t>(std::max<int64_t>(t, 0));
    }
    if (empty) continue;
    dims.dynamic_shared_bytes = static_cast<uint32_t>(b.slot(k->dynamic_smem_slot()));
    // Scratch memory of this launch (zeroed when the kernel needs it so).
    std::vector<uint8_t*> scratch;
    if (k->allocations())
      for (const auto* al : *k->allocations()) {
        size_t bytes = static_cast<size_t>(b.slot(al->bytes_slot()));
        scratch.push_back(mem.get(bytes));
        if (al->zero_init()) device.fill_zero(scratch.back(), bytes);
      }
    std::vector<uint64_t> storage(k->args()->size());
    std::vector<void*> args(k->args()->size());
    for (uint32_t a = 0; a < k->args()->size(); ++a) {
      const fb::KernelArg* arg = k->args()->Get(a);
      switch (arg->role()) {
        case fb::ArgRole::Input:
        case fb::ArgRole::Output:
          std::memcpy(&storage[a], &buffer[arg->buffer()], sizeof(void*));
          break;
        case fb::ArgRole::Workspace:
          std::memcpy(&storage[a], &scratch[arg->allocation()], sizeof(void*));
          break;
        case fb::ArgRole::Scalar:
          scalar_value(*input_tensor[arg->input()], arg->c_type()->str(), &storage[a]);
          break;
        case fb::ArgRole::Symbol: {
          int64_t v = b.symbols[arg->symbol()];
          if (arg->dtype() == fb::DType::I32) {
            int32_t v32 = static_cast<int32_t>(v);
            std::memcpy(&storage[a], &v32, sizeof v32);
          } else {
            std::memcpy(&storage[a], &v, sizeof v);
          }
          break;
        }
      }
      args[a] = &storage[a];
    }
    device.launch(exe, ki, dims, args.data());
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
