// The C interface (fuserc_runtime.h) over the C++ embedding API (package.h, plan.h): handles
// wrap shared pointers, every exception becomes a status and a thread-local message.
#include "runtime/api/fuserc_runtime.h"

#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "fuserc/version.h"
#include "runtime/api/package.h"
#include "runtime/api/plan.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/cuda_error.h"
#include "runtime/package_report.h"
#include "serde/reader/program_printer.h"

namespace {

using fuserc::rt::Package;
using fuserc::rt::Plan;

struct TensorDims {
  std::vector<int32_t> symbol;
  std::vector<int64_t> value;
  std::vector<std::string> formula;
  std::vector<const char*> formula_ptr;
};

}  // namespace

struct fuserc_package {
  std::shared_ptr<Package> package;
  std::vector<TensorDims> inputs, outputs;
  std::vector<std::vector<int64_t>> constant_shapes;
};
struct fuserc_plan {
  std::shared_ptr<Plan> plan;
};
struct fuserc_graph {
  std::unique_ptr<fuserc::rt::Graph> graph;
};

namespace {

thread_local std::string g_last_error;

fuserc_status set_error(fuserc_status s, const std::string& message) {
  g_last_error = message;
  return s;
}

// Runs `f`, mapping exceptions to statuses; a UserError that is not a CudaError is `user`.
template <class F>
fuserc_status guarded(fuserc_status user, F&& f) {
  using fuserc::cuda::Failure;
  try {
    f();
    return FUSERC_OK;
  } catch (const fuserc::cuda::CudaError& e) {
    switch (e.kind()) {
      case Failure::NoDriver: return set_error(FUSERC_ERROR_NO_DRIVER, e.what());
      case Failure::NoDevice: return set_error(FUSERC_ERROR_NO_DEVICE, e.what());
      case Failure::NoCompatibleKernel:
        return set_error(FUSERC_ERROR_NO_COMPATIBLE_KERNEL, e.what());
      case Failure::OutOfMemory: return set_error(FUSERC_ERROR_OUT_OF_MEMORY, e.what());
      case Failure::InvalidArgument: return set_error(FUSERC_ERROR_INVALID_ARGUMENT, e.what());
      case Failure::Driver: return set_error(FUSERC_ERROR_CUDA, e.what());
      case Failure::NoLibrary: return set_error(FUSERC_ERROR_NO_LIBRARY, e.what());
    }
    return set_error(FUSERC_ERROR_CUDA, e.what());
  } catch (const fuserc::UserError& e) {
    return set_error(user, e.what());
  } catch (const fuserc::InternalError& e) {
    return set_error(FUSERC_ERROR_INTERNAL,
                     std::string(e.what()) + " (this is a bug in fuserc; please report it)");
  } catch (const std::bad_alloc&) {
    return set_error(FUSERC_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return set_error(FUSERC_ERROR_INTERNAL,
                     std::string("unexpected exception: ") + e.what() + " (a bug in fuserc)");
  }
}

fuserc_status null_argument(const char* function, const char* what) {
  return set_error(FUSERC_ERROR_INVALID_ARGUMENT, std::string(function) + ": " + what + " is NULL");
}

TensorDims dims_of(const fuserc::fb::Metadata& m, const fuserc::fb::Tensor& t) {
  TensorDims d;
  for (uint32_t slot : *t.shape_slots()) {
    const fuserc::fb::Instr* in = m.program()->Get(slot);
    d.symbol.push_back(in->op() == fuserc::fb::Opcode::Symbol ? static_cast<int32_t>(in->imm())
                                                              : -1);
    d.value.push_back(in->op() == fuserc::fb::Opcode::Const ? in->imm() : -1);
    d.formula.push_back(fuserc::slot_formula(m, slot));
  }
  for (const auto& f : d.formula) d.formula_ptr.push_back(f.c_str());
  return d;
}

fuserc_package* wrap(std::shared_ptr<Package> p) {
  auto* h = new fuserc_package{std::move(p), {}, {}};
  const auto& m = h->package->executable().metadata();
  for (const auto* t : *m.inputs()) h->inputs.push_back(dims_of(m, *t));
  for (const auto* t : *m.outputs()) h->outputs.push_back(dims_of(m, *t));
  if (m.constants())
    for (const auto* c : *m.constants())
      h->constant_shapes.emplace_back(c->shape()->begin(), c->shape()->end());
  return h;
}

fuserc::rt::LoadOptions load_options(const fuserc_load_options* o) {
  fuserc::rt::LoadOptions lo;
  if (o) {
    lo.device = o->device;
    lo.context = o->context;
  }
  return lo;
}

fuserc_status tensor_info(const fuserc_package* p, int32_t index, bool input,
                          fuserc_tensor_info* out, const char* function) {
  if (!p) return null_argument(function, "package");
  if (!out) return null_argument(function, "out");
  const auto& m = p->package->executable().metadata();
  const auto* list = input ? m.inputs() : m.outputs();
  if (index < 0 || static_cast<uint32_t>(index) >= list->size())
    return set_error(FUSERC_ERROR_INVALID_ARGUMENT, std::string(function) + ": index " +
                                                        std::to_string(index) + " out of range (" +
                                                        std::to_string(list->size()) + ")");
  const fuserc::fb::Tensor* t = list->Get(static_cast<uint32_t>(index));
  const TensorDims& d = (input ? p->inputs : p->outputs)[static_cast<size_t>(index)];
  out->name = t->name()->c_str();
  out->dtype = static_cast<int32_t>(t->dtype());
  out->rank = static_cast<int32_t>(d.symbol.size());
  out->is_scalar = t->scalar() ? 1 : 0;
  out->in_place_of = input ? -1 : t->alias_input();
  out->source_input = input ? -1 : t->source_input();
  out->has_strides = t->stride_slots()->size() > 0 ? 1 : 0;
  out->dim_symbol = d.symbol.data();
  out->dim_value = d.value.data();
  out->dim_formula = d.formula_ptr.data();
  return FUSERC_OK;
}

fuserc_status shape_of(const fuserc_plan* p, int32_t index, int64_t* out, int which,
                       const char* function) {
  if (!p) return null_argument(function, "plan");
  if (!out) return null_argument(function, "out");
  const auto& m = p->plan->package_metadata();
  uint32_t count = which == 2 ? m.outputs()->size() : m.inputs()->size();
  if (index < 0 || static_cast<uint32_t>(index) >= count)
    return set_error(FUSERC_ERROR_INVALID_ARGUMENT, std::string(function) + ": index " +
                                                        std::to_string(index) + " out of range (" +
                                                        std::to_string(count) + ")");
  auto i = static_cast<uint32_t>(index);
  std::vector<int64_t> v = which == 0   ? p->plan->input_shape(i)
                           : which == 1 ? p->plan->input_strides(i)
                                        : p->plan->output_shape(i);
  std::copy(v.begin(), v.end(), out);
  return FUSERC_OK;
}

}  // namespace

namespace {

fuserc_status bind_inputs(fuserc_package* p, const int64_t* const* shapes, const int32_t* ranks,
                          const void* const* scalar_values, int32_t n, fuserc_plan** out,
                          const char* function) {
  if (!p) return null_argument(function, "package");
  if (!out) return null_argument(function, "out");
  *out = nullptr;
  if (n > 0 && (!shapes || !ranks)) return null_argument(function, !shapes ? "shapes" : "ranks");
  for (int32_t i = 0; i < n; ++i)
    if (ranks[i] < 0 || (ranks[i] > 0 && !shapes[i]))
      return set_error(FUSERC_ERROR_INVALID_ARGUMENT,
                       std::string(function) + ": input " + std::to_string(i) + " has rank " +
                           std::to_string(ranks[i]) + (ranks[i] > 0 ? " and no shape" : ""));
  return guarded(FUSERC_ERROR_SHAPE, [&] {
    std::vector<std::vector<int64_t>> s;
    for (int32_t i = 0; i < n; ++i) s.emplace_back(shapes[i], shapes[i] + ranks[i]);
    std::vector<const void*> scalars;
    if (scalar_values) scalars.assign(scalar_values, scalar_values + n);
    *out = new fuserc_plan{p->package->bind_shapes(s, scalars)};
  });
}

}  // namespace

namespace fuserc::rt {
fuserc_status c_api_guarded(void (*f)(void*), void* data) {
  return guarded(FUSERC_ERROR_INVALID_ARGUMENT, [&] { f(data); });
}
}  // namespace fuserc::rt

extern "C" {

const char* fuserc_version(void) {
  return FUSERC_VERSION_STRING;
}

int32_t fuserc_abi_version(void) {
  return FUSERC_RUNTIME_ABI_VERSION;
}

const char* fuserc_status_name(fuserc_status s) {
  switch (s) {
    case FUSERC_OK: return "FUSERC_OK";
    case FUSERC_ERROR_INVALID_ARGUMENT: return "FUSERC_ERROR_INVALID_ARGUMENT";
    case FUSERC_ERROR_PACKAGE: return "FUSERC_ERROR_PACKAGE";
    case FUSERC_ERROR_SHAPE: return "FUSERC_ERROR_SHAPE";
    case FUSERC_ERROR_NO_DRIVER: return "FUSERC_ERROR_NO_DRIVER";
    case FUSERC_ERROR_NO_DEVICE: return "FUSERC_ERROR_NO_DEVICE";
    case FUSERC_ERROR_NO_COMPATIBLE_KERNEL: return "FUSERC_ERROR_NO_COMPATIBLE_KERNEL";
    case FUSERC_ERROR_CUDA: return "FUSERC_ERROR_CUDA";
    case FUSERC_ERROR_OUT_OF_MEMORY: return "FUSERC_ERROR_OUT_OF_MEMORY";
    case FUSERC_ERROR_INTERNAL: return "FUSERC_ERROR_INTERNAL";
    case FUSERC_ERROR_NO_LIBRARY: return "FUSERC_ERROR_NO_LIBRARY";
  }
  return "FUSERC_ERROR_UNKNOWN";
}

const char* fuserc_last_error(void) {
  return g_last_error.c_str();
}

fuserc_status fuserc_driver_check(int32_t device) {
  return guarded(FUSERC_ERROR_INVALID_ARGUMENT, [&] {
    using namespace fuserc::cuda;
    const DriverApi& d = driver();
    int count = 0;
    check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (device < 0 || device >= count)
      throw CudaError(Failure::NoDevice, "no CUDA device " + std::to_string(device) + " (" +
                                             std::to_string(count) + " visible)");
  });
}

fuserc_status fuserc_package_load(const char* path, const fuserc_load_options* options,
                                  fuserc_package** out) {
  if (!path) return null_argument("fuserc_package_load", "path");
  if (!out) return null_argument("fuserc_package_load", "out");
  *out = nullptr;
  return guarded(FUSERC_ERROR_PACKAGE,
                 [&] { *out = wrap(Package::load(path, load_options(options))); });
}

fuserc_status fuserc_package_load_bytes(const void* data, size_t size, int32_t copy,
                                        const fuserc_load_options* options, fuserc_package** out) {
  if (!data) return null_argument("fuserc_package_load_bytes", "data");
  if (!out) return null_argument("fuserc_package_load_bytes", "out");
  *out = nullptr;
  return guarded(FUSERC_ERROR_PACKAGE, [&] {
    if (copy)
      *out = wrap(Package::from_bytes(std::string(static_cast<const char*>(data), size), "<memory>",
                                      load_options(options)));
    else
      *out = wrap(Package::view_bytes(data, size, "<memory>", load_options(options)));
  });
}

void fuserc_package_free(fuserc_package* package) {
  delete package;
}

const char* fuserc_package_name(const fuserc_package* p) {
  return p ? p->package->executable().metadata().name()->c_str() : "";
}

int32_t fuserc_package_num_symbols(const fuserc_package* p) {
  return p ? static_cast<int32_t>(p->package->executable().metadata().symbols()->size()) : 0;
}

int32_t fuserc_package_num_inputs(const fuserc_package* p) {
  return p ? static_cast<int32_t>(p->inputs.size()) : 0;
}

int32_t fuserc_package_num_outputs(const fuserc_package* p) {
  return p ? static_cast<int32_t>(p->outputs.size()) : 0;
}

fuserc_status fuserc_package_symbol(const fuserc_package* p, int32_t index,
                                    fuserc_symbol_info* out) {
  if (!p) return null_argument("fuserc_package_symbol", "package");
  if (!out) return null_argument("fuserc_package_symbol", "out");
  const auto* symbols = p->package->executable().metadata().symbols();
  if (index < 0 || static_cast<uint32_t>(index) >= symbols->size())
    return set_error(FUSERC_ERROR_INVALID_ARGUMENT, "fuserc_package_symbol: index " +
                                                        std::to_string(index) + " out of range (" +
                                                        std::to_string(symbols->size()) + ")");
  const auto* s = symbols->Get(static_cast<uint32_t>(index));
  out->name = s->name() ? s->name()->c_str() : "";
  out->min = s->min();
  out->max = s->max();
  out->hint = s->hint();
  return FUSERC_OK;
}

fuserc_status fuserc_package_input(const fuserc_package* p, int32_t index,
                                   fuserc_tensor_info* out) {
  return tensor_info(p, index, true, out, "fuserc_package_input");
}

fuserc_status fuserc_package_output(const fuserc_package* p, int32_t index,
                                    fuserc_tensor_info* out) {
  return tensor_info(p, index, false, out, "fuserc_package_output");
}

int32_t fuserc_package_input_symbol(const fuserc_package* p, int32_t index) {
  if (!p || index < 0 || static_cast<size_t>(index) >= p->inputs.size()) return -1;
  return p->package->executable().input_specs()[static_cast<size_t>(index)].sets_symbol;
}

int32_t fuserc_package_num_constants(const fuserc_package* p) {
  return p ? static_cast<int32_t>(p->constant_shapes.size()) : 0;
}

fuserc_status fuserc_package_constant(const fuserc_package* p, int32_t index,
                                      fuserc_constant_info* out) {
  if (!p) return null_argument("fuserc_package_constant", "package");
  if (!out) return null_argument("fuserc_package_constant", "out");
  if (index < 0 || static_cast<size_t>(index) >= p->constant_shapes.size())
    return set_error(FUSERC_ERROR_INVALID_ARGUMENT,
                     "fuserc_package_constant: index " + std::to_string(index) +
                         " out of range (" + std::to_string(p->constant_shapes.size()) + ")");
  const auto* c = p->package->executable().metadata().constants()->Get(
      static_cast<uint32_t>(index));
  out->name = c->name()->c_str();
  out->dtype = static_cast<int32_t>(c->dtype());
  out->rank = static_cast<int32_t>(p->constant_shapes[index].size());
  out->shape = p->constant_shapes[index].data();
  out->bytes = c->data()->size();
  out->hash = c->data()->hash();
  return FUSERC_OK;
}

int32_t fuserc_package_is_emulated(const fuserc_package* p) {
  return p && p->package->emulated() ? 1 : 0;
}

fuserc_status fuserc_package_inspect_json(const fuserc_package* p, const int64_t* values, int32_t n,
                                          char* buffer, size_t buffer_size, size_t* length) {
  if (!p) return null_argument("fuserc_package_inspect_json", "package");
  if (!length) return null_argument("fuserc_package_inspect_json", "length");
  if (values && n != fuserc_package_num_symbols(p))
    return set_error(FUSERC_ERROR_SHAPE,
                     p->package->name() + ": " + std::to_string(n) + " symbol values for " +
                         std::to_string(fuserc_package_num_symbols(p)) + " symbols");
  return guarded(FUSERC_ERROR_SHAPE, [&] {
    p->package->executable().package().verify_all();
    std::shared_ptr<const fuserc::Binding> bound;
    if (values) bound = p->package->sizes(std::vector<int64_t>(values, values + n));
    std::string text = fuserc::package_json(p->package->executable(), bound.get()).dump(2);
    *length = text.size();
    if (buffer && buffer_size > text.size()) std::memcpy(buffer, text.c_str(), text.size() + 1);
  });
}

fuserc_status fuserc_bind(fuserc_package* p, const int64_t* values, int32_t n, fuserc_plan** out) {
  if (!p) return null_argument("fuserc_bind", "package");
  if (!out) return null_argument("fuserc_bind", "out");
  *out = nullptr;
  if (n != fuserc_package_num_symbols(p))
    return set_error(FUSERC_ERROR_SHAPE,
                     p->package->name() + ": " + std::to_string(n) + " symbol values for " +
                         std::to_string(fuserc_package_num_symbols(p)) + " symbols");
  if (n > 0 && !values) return null_argument("fuserc_bind", "symbol_values");
  return guarded(FUSERC_ERROR_SHAPE, [&] {
    std::vector<int64_t> v(values, values + n);
    *out = new fuserc_plan{p->package->bind(v)};
  });
}


fuserc_status fuserc_bind_shapes(fuserc_package* p, const int64_t* const* shapes,
                                 const int32_t* ranks, int32_t n, fuserc_plan** out) {
  return bind_inputs(p, shapes, ranks, nullptr, n, out, "fuserc_bind_shapes");
}

fuserc_status fuserc_bind_inputs(fuserc_package* p, const int64_t* const* shapes,
                                 const int32_t* ranks, const void* const* scalar_values,
                                 int32_t n, fuserc_plan** out) {
  return bind_inputs(p, shapes, ranks, scalar_values, n, out, "fuserc_bind_inputs");
}

void fuserc_plan_free(fuserc_plan* plan) {
  delete plan;
}

size_t fuserc_plan_workspace_bytes(const fuserc_plan* p) {
  return p ? p->plan->workspace_bytes() : 0;
}

int32_t fuserc_plan_num_kernel_launches(const fuserc_plan* p) {
  return p ? static_cast<int32_t>(p->plan->num_kernel_launches()) : 0;
}

fuserc_status fuserc_plan_symbol_values(const fuserc_plan* p, int64_t* values) {
  if (!p) return null_argument("fuserc_plan_symbol_values", "plan");
  if (!values) return null_argument("fuserc_plan_symbol_values", "values");
  const auto& s = p->plan->binding().symbols;
  std::copy(s.begin(), s.end(), values);
  return FUSERC_OK;
}

fuserc_status fuserc_plan_input_shape(const fuserc_plan* p, int32_t index, int64_t* shape) {
  return shape_of(p, index, shape, 0, "fuserc_plan_input_shape");
}

fuserc_status fuserc_plan_input_strides(const fuserc_plan* p, int32_t index, int64_t* strides) {
  return shape_of(p, index, strides, 1, "fuserc_plan_input_strides");
}

fuserc_status fuserc_plan_output_shape(const fuserc_plan* p, int32_t index, int64_t* shape) {
  return shape_of(p, index, shape, 2, "fuserc_plan_output_shape");
}

fuserc_status fuserc_launch(fuserc_plan* p, void* stream, const void* const* inputs,
                            void* const* outputs, void* workspace, size_t workspace_bytes) {
  return fuserc_launch_strided(p, stream, inputs, nullptr, outputs, workspace, workspace_bytes);
}

fuserc_status fuserc_launch_strided(fuserc_plan* p, void* stream, const void* const* inputs,
                                    const int64_t* const* input_strides, void* const* outputs,
                                    void* workspace, size_t workspace_bytes) {
  if (!p) return null_argument("fuserc_launch", "plan");
  return guarded(FUSERC_ERROR_INVALID_ARGUMENT, [&] {
    p->plan->launch(stream, inputs, outputs, workspace, workspace_bytes, input_strides);
  });
}

fuserc_status fuserc_graph_capture(fuserc_plan* p, void* stream, const void* const* inputs,
                                   void* const* outputs, void* workspace, size_t workspace_bytes,
                                   fuserc_graph** out) {
  if (!p) return null_argument("fuserc_graph_capture", "plan");
  if (!out) return null_argument("fuserc_graph_capture", "out");
  *out = nullptr;
  return guarded(FUSERC_ERROR_INVALID_ARGUMENT, [&] {
    *out = new fuserc_graph{p->plan->capture(stream, inputs, outputs, workspace, workspace_bytes)};
  });
}

fuserc_status fuserc_graph_launch(fuserc_graph* g, void* stream) {
  if (!g) return null_argument("fuserc_graph_launch", "graph");
  return guarded(FUSERC_ERROR_INVALID_ARGUMENT, [&] { g->graph->launch(stream); });
}

void fuserc_graph_free(fuserc_graph* g) {
  delete g;
}

}  // extern "C"
