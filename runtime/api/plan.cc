#include "runtime/api/plan.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "runtime/api/host_launcher.h"
#include "runtime/cuda/cublaslt_matmul.h"
#include "runtime/api/package_state.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_error.h"

namespace fuserc::rt {
namespace {

using cuda::CudaError;
using cuda::Failure;

cuda::CUdeviceptr device_ptr(const void* p) {
  return static_cast<cuda::CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

std::string list(const int64_t* v, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

Plan::Plan(std::shared_ptr<PackageState> state, std::shared_ptr<const Binding> binding)
    : state_(std::move(state)),
      driver_(state_->emulated() ? nullptr : &cuda::driver()),
      binding_(std::move(binding)),
      plan_(*state_->exe, *binding_) {
  const fb::Metadata& m = state_->exe->metadata();
  for (const PlannedLaunch& l : plan_.launches())
    names_.push_back(l.matmul >= 0
                         ? plan_.matmuls()[static_cast<size_t>(l.matmul)].name.c_str()
                         : m.kernels()->Get(l.kernel)->name()->c_str());
  describe_tensors();
  if (state_->emulated()) {
    host_ = std::make_unique<HostLauncher>(state_, plan_);
    return;
  }
  const cuda::DriverApi& d = table();
  cuda::ContextScope scope(state_->context->get());
  for (const PlannedLaunch& l : plan_.launches()) {
    if (l.matmul >= 0) {  // a library step: cuBLASLt set up now (descriptors, algorithm)
      functions_.push_back(nullptr);
      const PlannedMatmul& mm = plan_.matmuls()[static_cast<size_t>(l.matmul)];
      LibraryStep step;
      // The plan's buffers are 256-byte aligned; the caller's may be aligned only to their
      // elements: a second runner takes those (chosen per launch).
      step.aligned = std::make_unique<cuda::MatmulRunner>(mm.problem, mm.workspace_bytes, 256);
      step.any = std::make_unique<cuda::MatmulRunner>(mm.problem, mm.workspace_bytes,
                                                      element_alignment(mm.problem));
      library_.push_back(std::move(step));
      continue;
    }
    library_.emplace_back();
    functions_.push_back(state_->modules->function(l.kernel, l.dims.dynamic_shared_bytes));
  }
  storage_.resize(std::max<uint32_t>(plan_.max_args(), 1));
  for (uint64_t& slot : storage_) params_.push_back(&slot);
  if (plan_.counter_bytes() > 0) {
    cuda::CUdeviceptr p = 0;
    cuda::check(d.cuMemAlloc(&p, plan_.counter_bytes()), "allocating grid-reduction counters");
    counters_ = p;
  }
}

void Plan::describe_tensors() {
  const fb::Metadata& m = state_->exe->metadata();
  for (uint32_t i = 0; i < m.inputs()->size(); ++i) {
    const fb::Tensor* t = m.inputs()->Get(i);
    input_scalar_.push_back(t->scalar());
    std::vector<int64_t> shape, strides;
    for (uint32_t slot : *t->shape_slots()) shape.push_back(binding_->slot(slot));
    for (uint32_t slot : *t->stride_slots()) strides.push_back(binding_->slot(slot));
    if (strides.empty()) {  // contiguous
      strides.assign(shape.size(), 1);
      for (size_t k = shape.size(); k-- > 1;)
        strides[k - 1] = strides[k] * std::max<int64_t>(shape[k], 1);
    }
    shapes_.push_back(std::move(shape));
    strides_.push_back(std::move(strides));
    input_needed_.push_back(t->scalar() || binding_->slot(t->bytes_slot()) > 0);
    input_bytes_.push_back(t->scalar() ? 0
                                       : static_cast<uint64_t>(binding_->slot(t->bytes_slot())));
    input_align_.push_back(static_cast<uint32_t>(dtype_size(static_cast<DType>(t->dtype()))));
  }
  input_written_.assign(m.inputs()->size(), false);
  for (const auto* b : *m.buffers())
    if (b->kind() == fb::BufferKind::Output && b->alias_input() >= 0)
      input_written_[static_cast<uint32_t>(b->alias_input())] = true;
  for (uint32_t j = 0; j < m.outputs()->size(); ++j) {
    const OutputSource& o = plan_.outputs()[j];
    output_needed_.push_back(!o.copied() && o.bytes > 0);
    bool strided = false;
    if (o.from_input >= 0) {
      const std::vector<int64_t>& shape = shapes_[o.from_input];
      int64_t want = 1;
      for (size_t k = shape.size(); k-- > 0;) {
        if (shape[k] > 1 && strides_[o.from_input][k] != want) strided = true;
        want *= std::max<int64_t>(shape[k], 1);
      }
    }
    output_in_strided_input_.push_back(strided);
    output_align_.push_back(
        static_cast<uint32_t>(dtype_size(static_cast<DType>(m.outputs()->Get(j)->dtype()))));
  }
}

// Misaligned and overlapping buffers: each tensor pointer is aligned to its element size; no
// output overlaps an input or another output, and no input written in place overlaps another
// input, except where the two are the same memory by design (an output that is an input or
// is written in its place, passed as that input's pointer; an output listed twice).
void Plan::check_memory(const void* const* inputs, void* const* outputs, const void* workspace,
                        const std::function<void(const std::string&)>& bad) const {
  const fb::Metadata& m = state_->exe->metadata();
  auto in_name = [&](size_t i) {
    return "input " + quote(m.inputs()->Get(static_cast<uint32_t>(i))->name()->str());
  };
  auto out_name = [&](size_t j) {
    return "output " + quote(m.outputs()->Get(static_cast<uint32_t>(j))->name()->str());
  };
  auto addr = [](const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); };
  auto hex = [](uint64_t v) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
    return std::string(text);
  };
  auto name = [&](int32_t index) { return index >= 0 ? in_name(index) : out_name(-1 - index); };
  auto misaligned = [&](const void* p, uint32_t align, int32_t index) {
    if (addr(p) % align != 0)
      bad(name(index) + " at " + hex(addr(p)) + " is not aligned to its " + std::to_string(align) +
          "-byte elements");
  };
  // Every non-empty tensor as [begin, end), sorted by begin, swept with the list of those
  // still open: n log n plus the overlapping pairs. The scratch lists are reused, so that
  // launching does not allocate after a thread's first launch.
  struct Range {
    uint64_t begin, end;
    int32_t index;  // inputs: i; outputs: -1 - j
  };
  thread_local std::vector<Range> ranges, open;
  ranges.clear();
  open.clear();
  for (size_t i = 0; inputs && i < input_needed_.size(); ++i) {
    if (input_scalar_[i] || !inputs[i]) continue;
    misaligned(inputs[i], input_align_[i], int32_t(i));
    if (input_bytes_[i] > 0)
      ranges.push_back({addr(inputs[i]), addr(inputs[i]) + input_bytes_[i], int32_t(i)});
  }
  const auto& src = plan_.outputs();
  for (size_t j = 0; outputs && j < output_needed_.size(); ++j) {
    if (!outputs[j]) continue;
    misaligned(outputs[j], output_align_[j], -1 - int32_t(j));
    if (src[j].bytes > 0)
      ranges.push_back({addr(outputs[j]), addr(outputs[j]) + src[j].bytes, -1 - int32_t(j)});
  }
  if (workspace && addr(workspace) % 16 != 0)
    bad("the workspace at " + hex(addr(workspace)) + " is not 16-byte aligned");
  // Whether two overlapping tensors may share memory: read-only inputs always; an output and
  // the input it is (or is written in place of), or two listings of one value, at one address.
  auto allowed = [&](const Range& a, const Range& b) {
    if (a.index >= 0 && b.index >= 0) return !input_written_[a.index] && !input_written_[b.index];
    if (a.begin != b.begin) return false;
    if (a.index >= 0 || b.index >= 0) {
      const Range& o = a.index < 0 ? a : b;
      const Range& i = a.index < 0 ? b : a;
      return src[-1 - o.index].from_input == i.index;
    }
    const OutputSource& x = src[-1 - a.index];
    const OutputSource& y = src[-1 - b.index];
    return x.from_output == -1 - b.index || y.from_output == -1 - a.index ||
           (x.from_output >= 0 && x.from_output == y.from_output) ||
           (x.from_input >= 0 && x.from_input == y.from_input);
  };
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (const Range& r : ranges) {
    open.erase(
        std::remove_if(open.begin(), open.end(), [&](const Range& o) { return o.end <= r.begin; }),
        open.end());
    for (const Range& o : open)
      if (!allowed(o, r)) {
        const bool input_pair = o.index >= 0 && r.index >= 0;
        const Range& w = input_pair && input_written_[r.index] ? r : o;
        const Range& other = &w == &r ? o : r;
        if (input_pair)
          bad(name(w.index) + ", which is written in place, overlaps the memory of " +
              name(other.index));
        bad(name(r.index < 0 ? r.index : o.index) + " overlaps the memory of " +
            name(r.index < 0 ? o.index : r.index));
      }
    open.push_back(r);
  }
}

uint32_t Plan::element_alignment(const MatmulProblem& p) {
  size_t a = dtype_size(p.a.dtype);
  for (DType d : {p.b.dtype, p.c.dtype}) a = std::min(a, dtype_size(d));
  if (p.has_bias) a = std::min(a, dtype_size(p.bias.dtype));
  return static_cast<uint32_t>(a);
}

void Plan::run_library_step(size_t i, const ArgBases& bases, cuda::CUstream stream) {
  const PlannedMatmul& mm = plan_.matmuls()[static_cast<size_t>(plan_.launches()[i].matmul)];
  const void* a = plan_.pointer(mm.a, bases);
  const void* b = plan_.pointer(mm.b, bases);
  const void* bias = mm.problem.has_bias ? plan_.pointer(mm.bias, bases) : nullptr;
  void* c = const_cast<void*>(plan_.pointer(mm.c, bases));
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 256 == 0; };
  const LibraryStep& step = library_[i];
  const cuda::MatmulRunner& runner =
      aligned(a) && aligned(b) && aligned(c) && (!bias || aligned(bias)) ? *step.aligned
                                                                         : *step.any;
  // The library's workspace is the scratch region, which the kernels' scratch also uses: the
  // steps run in order on one stream.
  runner.run(a, b, bias, c, bases.workspace + plan_.scratch_offset(), stream);
}

Plan::~Plan() {
  if (!counters_ && !owned_workspace_) return;
  try {
    const cuda::DriverApi& d = table();
    cuda::ContextScope scope(state_->context->get());
    if (counters_) d.cuMemFree(counters_);
    if (owned_workspace_) d.cuMemFree(owned_workspace_);
  } catch (const std::exception&) {
    // The context is gone: so is its memory.
  }
}

const fb::Metadata& Plan::package_metadata() const {
  return state_->exe->metadata();
}

std::vector<int64_t> Plan::output_shape(uint32_t output) const {
  std::vector<int64_t> s;
  for (uint32_t slot : *state_->exe->metadata().outputs()->Get(output)->shape_slots())
    s.push_back(binding_->slot(slot));
  return s;
}

void Plan::check_pointers(const void* const* inputs, void* const* outputs, const void* workspace,
                          const int64_t* const* strides) const {
  const fb::Metadata& m = state_->exe->metadata();
  auto bad = [&](const std::string& what) {
    throw CudaError(Failure::InvalidArgument, state_->exe->package().name() + ": " + what);
  };
  if (!inputs && !input_needed_.empty()) bad("no input pointers given");
  if (!outputs && !output_needed_.empty()) bad("no output pointers given");
  for (size_t i = 0; i < input_needed_.size(); ++i)
    if (input_needed_[i] && !inputs[i])
      bad((input_scalar_[i] ? "scalar input " : "input ") +
          quote(m.inputs()->Get(static_cast<uint32_t>(i))->name()->str()) + " is null");
  // A scalar input that sets a symbol must have the value the plan was bound with.
  const auto& specs = state_->exe->input_specs();
  for (size_t i = 0; inputs && i < specs.size(); ++i) {
    if (specs[i].sets_symbol < 0 || !inputs[i]) continue;
    const int64_t v = integer_scalar(specs[i].dtype, inputs[i]);
    const int64_t bound = binding_->symbols[static_cast<size_t>(specs[i].sets_symbol)];
    if (v != bound)
      bad("scalar input " + quote(specs[i].name) + " is " + std::to_string(v) +
          ", but this plan was bound with " +
          state_->exe->symbol_ranges()[static_cast<size_t>(specs[i].sets_symbol)].name + " = " +
          std::to_string(bound) + " (bind again for the new size)");
  }
  auto output = [&](size_t j) {
    return "output " + quote(m.outputs()->Get(static_cast<uint32_t>(j))->name()->str());
  };
  for (size_t j = 0; j < output_needed_.size(); ++j) {
    if (output_needed_[j] && !outputs[j]) bad(output(j) + " is null");
    if (output_in_strided_input_[j] && outputs && outputs[j]) {
      int32_t from = plan_.outputs()[j].from_input;
      if (outputs[j] != inputs[from])
        bad(output(j) + " is the memory of input " + quote(m.inputs()->Get(from)->name()->str()) +
            ", which is strided: pass NULL or that input's pointer");
    }
  }
  check_memory(inputs, outputs, workspace, bad);
  if (!strides) return;
  for (uint32_t i = 0; i < input_needed_.size(); ++i) {
    if (!strides[i] || input_scalar_[i]) continue;
    const std::vector<int64_t>& shape = shapes_[i];
    const std::vector<int64_t>& want = strides_[i];
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] > 1 && strides[i][d] != want[d])
        bad("input " + quote(m.inputs()->Get(i)->name()->str()) + " has strides " +
            list(strides[i], shape.size()) + " but the package needs " +
            list(want.data(), want.size()) + " (copy it to that layout first)");
  }
}

void Plan::check_host_stream(void* stream) const {
  if (stream)
    throw CudaError(Failure::InvalidArgument,
                    state_->exe->package().name() +
                        ": this package runs in the CPU emulator: pass a NULL stream and host "
                        "memory");
}

uint8_t* Plan::workspace_for(void* workspace, size_t size) {
  uint64_t need = plan_.workspace_bytes();
  if (need == 0) return static_cast<uint8_t*>(workspace);
  if (workspace) {
    if (size < need)
      throw CudaError(Failure::InvalidArgument,
                      state_->exe->package().name() + ": the workspace has " +
                          std::to_string(size) + " B but this binding needs " +
                          std::to_string(need) + " B (workspace_bytes())");
    return static_cast<uint8_t*>(workspace);
  }
  if (!owned_workspace_) {
    cuda::CUdeviceptr p = 0;
    cuda::check(table().cuMemAlloc(&p, need), "allocating the plan's workspace");
    owned_workspace_ = p;
  }
  return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(owned_workspace_));
}

ArgBases Plan::prepare(void* stream, const void* const* inputs, void* const* outputs,
                       void* workspace, size_t workspace_size) {
  ArgBases bases;
  bases.inputs = inputs;
  bases.constants = state_->constants.data();
  bases.outputs = outputs;
  bases.workspace = workspace_for(workspace, workspace_size);
  bases.counters = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(counters_));
  if (counters_ && !counters_zeroed_.load(std::memory_order_relaxed)) {
    cuda::check(table().cuMemsetD8Async(counters_, 0, plan_.counter_bytes(),
                                        static_cast<cuda::CUstream>(stream)),
                "zeroing grid-reduction counters");
    counters_zeroed_.store(true, std::memory_order_relaxed);
  }
  return bases;
}

void Plan::launch(void* stream, const void* const* inputs, void* const* outputs, void* workspace,
                  size_t workspace_size, const int64_t* const* input_strides) {
  check_pointers(inputs, outputs, workspace, input_strides);
  if (host_) {
    check_host_stream(stream);
    std::lock_guard<std::mutex> lock(mutex_);
    host_->launch(0, plan_.launches().size(), inputs, outputs, workspace, workspace_size);
    return;
  }
  const cuda::DriverApi& d = table();
  auto s = static_cast<cuda::CUstream>(stream);
  std::lock_guard<std::mutex> lock(mutex_);
  cuda::ContextScope scope(state_->context->get());
  ArgBases bases = prepare(stream, inputs, outputs, workspace, workspace_size);
  const auto& launches = plan_.launches();
  for (size_t i = 0; i < launches.size(); ++i) {
    if (launches[i].matmul >= 0) {
      run_library_step(i, bases, s);
      continue;
    }
    plan_.write_args(launches[i], bases, storage_.data());
    cuda::launch_kernel(d, static_cast<cuda::CUfunction>(functions_[i]), names_[i],
                        launches[i].dims, s, params_.data());
  }
  const auto& outs = plan_.outputs();
  for (size_t j = 0; j < outs.size(); ++j) {
    const OutputSource& o = outs[j];
    if (!o.copied() || !outputs || !outputs[j] || o.bytes == 0) continue;
    const void* src = o.from_input >= 0      ? inputs[o.from_input]
                      : o.from_constant >= 0 ? state_->constants[o.from_constant]
                                             : outputs[o.from_output];
    if (src && src != outputs[j])
      cuda::check(d.cuMemcpyDtoDAsync(device_ptr(outputs[j]), device_ptr(src), o.bytes, s),
                  "copying an output");
  }
}

void Plan::launch_one(size_t i, void* stream, const void* const* inputs, void* const* outputs,
                      void* workspace, size_t workspace_size) {
  check_pointers(inputs, outputs, workspace, nullptr);
  if (host_) {
    check_host_stream(stream);
    std::lock_guard<std::mutex> lock(mutex_);
    (void)plan_.launches().at(i);  // range check
    host_->launch(i, i + 1, inputs, outputs, workspace, workspace_size);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  cuda::ContextScope scope(state_->context->get());
  ArgBases bases = prepare(stream, inputs, outputs, workspace, workspace_size);
  const PlannedLaunch& l = plan_.launches().at(i);
  if (l.matmul >= 0) {
    run_library_step(i, bases, static_cast<cuda::CUstream>(stream));
    return;
  }
  plan_.write_args(l, bases, storage_.data());
  cuda::launch_kernel(table(), static_cast<cuda::CUfunction>(functions_[i]), names_[i], l.dims,
                      static_cast<cuda::CUstream>(stream), params_.data());
}

std::unique_ptr<Graph> Plan::capture(void* stream, const void* const* inputs, void* const* outputs,
                                     void* workspace, size_t workspace_size) {
  if (host_)
    throw CudaError(Failure::InvalidArgument,
                    state_->exe->package().name() +
                        ": CUDA graphs need a GPU; this package runs in the CPU emulator");
  if (!stream)
    throw CudaError(Failure::InvalidArgument,
                    "capturing a CUDA graph needs a stream other than the legacy default stream");
  check_pointers(inputs, outputs, workspace, nullptr);
  const cuda::DriverApi& d = table();
  auto s = static_cast<cuda::CUstream>(stream);
  {
    // Allocate and zero before capturing, so that the graph holds only the kernels.
    std::lock_guard<std::mutex> lock(mutex_);
    cuda::ContextScope scope(state_->context->get());
    prepare(stream, inputs, outputs, workspace, workspace_size);
  }
  cuda::ContextScope scope(state_->context->get());
  cuda::check(d.cuStreamBeginCapture(s, cuda::kCaptureModeThreadLocal), "cuStreamBeginCapture");
  cuda::CUgraph graph = nullptr;
  try {
    launch(stream, inputs, outputs, workspace, workspace_size);
  } catch (...) {
    d.cuStreamEndCapture(s, &graph);
    if (graph) d.cuGraphDestroy(graph);
    throw;
  }
  cuda::check(d.cuStreamEndCapture(s, &graph), "cuStreamEndCapture");
  cuda::CUgraphExec exec = nullptr;
  cuda::CUresult r = d.cuGraphInstantiate(&exec, graph, 0);
  if (r != cuda::CUDA_SUCCESS) {
    d.cuGraphDestroy(graph);
    cuda::fail(r, "instantiating the CUDA graph of " + state_->exe->package().name());
  }
  return std::make_unique<Graph>(shared_from_this(), graph, exec);
}

Graph::Graph(std::shared_ptr<Plan> plan, void* graph, void* exec)
    : plan_(std::move(plan)), graph_(graph), exec_(exec) {}

Graph::~Graph() {
  const cuda::DriverApi& d = plan_->table();
  d.cuGraphExecDestroy(static_cast<cuda::CUgraphExec>(exec_));
  d.cuGraphDestroy(static_cast<cuda::CUgraph>(graph_));
}

void Graph::launch(void* stream) {
  const cuda::DriverApi& d = plan_->table();
  cuda::ContextScope scope(plan_->state_->context->get());
  cuda::check(
      d.cuGraphLaunch(static_cast<cuda::CUgraphExec>(exec_), static_cast<cuda::CUstream>(stream)),
      "launching the CUDA graph");
}

}  // namespace fuserc::rt
