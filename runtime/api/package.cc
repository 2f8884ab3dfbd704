#include "runtime/api/package.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/api/package_state.h"
#include "runtime/api/plan.h"
#include "runtime/cuda/cuda_error.h"

namespace fuserc::rt {

void PackageState::ensure_context() {
  if (context) return;
  if (options.context)
    context = std::make_unique<cuda::Context>(
        cuda::Context::borrowed(static_cast<cuda::CUcontext>(options.context)));
  else
    context = std::make_unique<cuda::Context>(cuda::Context::current_or_primary(options.device));
  modules = std::make_unique<cuda::KernelModules>(*exe, *context);
}

void PackageState::Free::operator()(uint8_t* p) const {
  std::free(p);
}

PackageState::~PackageState() {
  if (device_constants.empty() || !context) return;
  try {
    const cuda::DriverApi& d = cuda::driver();
    cuda::ContextScope scope(context->get());
    for (cuda::CUdeviceptr p : device_constants)
      if (p) d.cuMemFree(p);
  } catch (const std::exception&) {
    // The context is gone: so is its memory.
  }
}

void PackageState::ensure_constants() {
  if (constants_ready) return;
  const size_t n = exe->num_constants();
  std::vector<const void*> ptrs(n, nullptr);
  if (emulated()) {
    for (size_t i = 0; i < n; ++i) {
      std::string_view bytes = exe->constant_bytes(i);
      if (reinterpret_cast<uintptr_t>(bytes.data()) % kPlanAlignment == 0) {
        ptrs[i] = bytes.data();
        continue;
      }
      // Rounded up to the alignment (aligned_alloc's rule), zero past the end.
      const size_t size = (bytes.size() + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
      std::unique_ptr<uint8_t, Free> copy(
          static_cast<uint8_t*>(std::aligned_alloc(kPlanAlignment, std::max<size_t>(size, 1))));
      if (!copy) throw std::bad_alloc();
      std::memset(copy.get(), 0, size);
      std::memcpy(copy.get(), bytes.data(), bytes.size());
      ptrs[i] = copy.get();
      host_copies.push_back(std::move(copy));
    }
  } else {
    const cuda::DriverApi& d = cuda::driver();
    cuda::ContextScope scope(context->get());
    for (size_t i = 0; i < n; ++i) {
      std::string_view bytes = exe->constant_bytes(i);
      if (bytes.empty()) continue;
      cuda::CUdeviceptr p = 0;
      cuda::check(d.cuMemAlloc(&p, bytes.size()), "allocating a constant of the package");
      device_constants.push_back(p);
      cuda::check(d.cuMemcpyHtoD(p, bytes.data(), bytes.size()),
                  "uploading a constant of the package");
      ptrs[i] = reinterpret_cast<const void*>(static_cast<uintptr_t>(p));
    }
  }
  constants = std::move(ptrs);
  constants_ready = true;
}

DeviceProps PackageState::device_props() const {
  if (emulated()) return emulator->properties();
  return cuda::device_props_of(context->info());
}

Package::Package(std::unique_ptr<Executable> exe, LoadOptions options)
    : state_(std::make_shared<PackageState>()), options_device_(options.device) {
  state_->exe = std::move(exe);
  state_->options = options;
  if (state_->emulated()) state_->emulator = std::make_unique<EmulatorDevice>();
}

Package::~Package() = default;

std::shared_ptr<Package> Package::load(const std::string& path, LoadOptions options) {
  return std::shared_ptr<Package>(new Package(Executable::load(path), options));
}

std::shared_ptr<Package> Package::from_bytes(std::string bytes, const std::string& name,
                                             LoadOptions options) {
  return std::shared_ptr<Package>(new Package(
      std::make_unique<Executable>(PackageView::from_bytes(std::move(bytes), name)), options));
}

std::shared_ptr<Package> Package::view_bytes(const void* data, size_t size, const std::string& name,
                                             LoadOptions options) {
  return std::shared_ptr<Package>(new Package(std::make_unique<Executable>(PackageView::view_bytes(
                                                  static_cast<const uint8_t*>(data), size, name)),
                                              options));
}

const Executable& Package::executable() const {
  return *state_->exe;
}

const std::string& Package::name() const {
  return state_->exe->package().name();
}

std::shared_ptr<Plan> Package::bind(const std::vector<int64_t>& symbols) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = plans_.begin(); it != plans_.end(); ++it) {
    if ((*it)->binding().symbols == symbols) {
      plans_.splice(plans_.begin(), plans_, it);
      return plans_.front();
    }
  }
  // The shapes are checked before any GPU work (a refused shape is reported as such even
  // without a driver); then bound for the device when its properties differ from the default.
  auto binding = state_->exe->bind(symbols);
  DeviceProps device;
  {
    std::lock_guard<std::mutex> state_lock(state_->mutex);
    if (!state_->emulated()) state_->ensure_context();
    device = state_->device_props();
    state_->ensure_constants();
  }
  if (device_props_clamped(device) != binding->device) binding = state_->exe->bind(symbols, device);
  auto plan = std::make_shared<Plan>(state_, std::move(binding));
  plans_.push_front(plan);
  if (plans_.size() > kPlanCacheCapacity) plans_.pop_back();
  return plan;
}

std::shared_ptr<const Binding> Package::sizes(const std::vector<int64_t>& symbols) {
  // The device the plans are bound for once known (a GPU package before its first bind, or
  // without a driver, describes the default device).
  DeviceProps device;
  {
    std::lock_guard<std::mutex> state_lock(state_->mutex);
    if (state_->emulated() || state_->context) device = state_->device_props();
  }
  return state_->exe->bind(symbols, device);
}

std::shared_ptr<Plan> Package::bind_shapes(const std::vector<std::vector<int64_t>>& shapes,
                                           const std::vector<const void*>& scalar_values) {
  const Executable& exe = *state_->exe;
  Executable::ScalarValues scalars;
  if (!scalar_values.empty())
    scalars = [&](size_t i) -> int64_t {
      if (i >= scalar_values.size() || !scalar_values[i])
        throw UserError(SourcePlace{name()}, "scalar input " + quote(exe.input_specs()[i].name) +
                                                 " sets a symbol, but no value was given for it");
      return integer_scalar(exe.input_specs()[i].dtype, scalar_values[i]);
    };
  auto plan = bind(exe.symbols_of_shapes(shapes, name(), scalars));
  exe.check_expression_extents(plan->binding(), shapes, name());
  return plan;
}

}  // namespace fuserc::rt
