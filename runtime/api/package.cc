#include "runtime/api/package.h"

#include "runtime/api/package_state.h"
#include "runtime/api/plan.h"

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

std::shared_ptr<Plan> Package::bind_shapes(const std::vector<std::vector<int64_t>>& shapes) {
  return bind(state_->exe->symbols_of_shapes(shapes, name()));
}

}  // namespace fuserc::rt
