// Owns Executable: a verified package ready to launch. Loading builds nothing but a view into
// the package's bytes; binding evaluates the expression program once per shape signature and
// device (cached; launch configurations may read the device's properties, sizes of memory
// never do), checks the symbols' ranges and the kernels' guards, and picks each launch's
// variant. No segmentation, scheduling, lowering or compilation happens here (this library
// links only fuserc_base and the package reader).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/device_props.h"
#include "core/base/input_binding.h"
#include "serde/reader/package_reader.h"

namespace fuserc {

// The evaluated sizes of one shape signature on one device.
struct Binding {
  std::vector<int64_t> symbols;     // by symbol index
  DeviceProps device;               // as bound (clamped into the compiler's ranges)
  std::vector<int64_t> slots;       // the evaluated program
  std::vector<uint32_t> kernel_of;  // per launch of the plan: the kernel variant chosen
  int64_t slot(uint32_t s) const { return slots[s]; }
};

class Executable {
 public:
  static std::unique_ptr<Executable> load(const std::string& path);
  explicit Executable(std::unique_ptr<PackageView> package);

  const PackageView& package() const { return *package_; }
  // Unique in the process (never reused, unlike an address): devices key their caches on it.
  uint64_t id() const { return id_; }
  const fb::Metadata& metadata() const { return package_->metadata(); }

  // Binds symbol values (one per symbol, in package order) for a device (its properties are
  // clamped into the ranges the compiler planned for; the default is kDefaultSmCount SMs).
  // Throws UserError naming the problem: a symbol outside its range, size arithmetic
  // overflow, a guard that fails.
  std::shared_ptr<const Binding> bind(const std::vector<int64_t>& symbols,
                                      const DeviceProps& device = {});
  // Binds from input tensors (read from `file`): dtypes, ranks and extents are checked.
  std::shared_ptr<const Binding> bind_inputs(const TensorMap& inputs, const std::string& file,
                                             const DeviceProps& device = {});
  // Binds from the inputs' shapes (in graph order; a scalar's is empty); `who` names the
  // caller in messages.
  std::shared_ptr<const Binding> bind_shapes(const std::vector<std::vector<int64_t>>& shapes,
                                             const std::string& who,
                                             const DeviceProps& device = {});
  // The symbol values (package order) that input tensors give (checked as bind_inputs does).
  std::vector<int64_t> symbols_of_inputs(const TensorMap& inputs, const std::string& file) const;
  // The symbol values (package order) that input shapes give.
  std::vector<int64_t> symbols_of_shapes(const std::vector<std::vector<int64_t>>& shapes,
                                         const std::string& who) const;

  // The graph's inputs and symbols in the form bind_inputs checks.
  const std::vector<InputSpec>& input_specs() const { return input_specs_; }
  const std::vector<SymbolRange>& symbol_ranges() const { return symbol_ranges_; }

  size_t cache_size() const;
  static constexpr size_t kCacheCapacity = 16;

 private:
  std::unique_ptr<PackageView> package_;
  uint64_t id_;
  std::vector<InputSpec> input_specs_;
  std::vector<SymbolRange> symbol_ranges_;
  mutable std::mutex mutex_;
  std::list<std::shared_ptr<const Binding>> cache_;  // most recently used first

  std::shared_ptr<const Binding> evaluate(const std::vector<int64_t>& symbols,
                                          const DeviceProps& device) const;
  std::vector<int64_t> symbols_of(const SymbolValues& values) const;
};

}  // namespace fuserc
