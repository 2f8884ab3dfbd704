// Owns Executable: a verified package ready to launch. Loading builds nothing but a view into
// the package's bytes; binding evaluates the expression program once per shape signature and
// device (cached; launch configurations may read the device's properties, sizes of memory
// never do), checks the symbols' ranges and the kernels' guards, and picks each launch's
// variant. No segmentation, scheduling, lowering or compilation happens here (this library
// links only fuserc_base and the package reader).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/device_props.h"
#include "core/base/input_binding.h"
#include "serde/reader/package_reader.h"

namespace fuserc {

// Binding::kernel_of for a launch that is a library step (no kernel).
inline constexpr uint32_t kLibraryStep = UINT32_MAX;

// The evaluated sizes of one shape signature on one device.
struct Binding {
  std::vector<int64_t> symbols;     // by symbol index
  DeviceProps device;               // as bound (clamped into the compiler's ranges)
  std::vector<int64_t> slots;       // the evaluated program
  std::vector<uint32_t> kernel_of;  // per launch of the plan: the kernel variant chosen, or
                                    // kLibraryStep
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
  // The value of scalar input `i` (package order), asked only for scalar inputs that set a
  // symbol ("symbol" in the graph); null when the caller has none to give.
  using ScalarValues = std::function<int64_t(size_t input)>;

  // Binds from input tensors (read from `file`): dtypes, ranks and extents are checked.
  std::shared_ptr<const Binding> bind_inputs(const TensorMap& inputs, const std::string& file,
                                             const DeviceProps& device = {});
  // Binds from the inputs' shapes (in package order; a scalar's is empty) and the values of
  // scalar inputs that set a symbol; `who` names the caller in messages.
  std::shared_ptr<const Binding> bind_shapes(const std::vector<std::vector<int64_t>>& shapes,
                                             const std::string& who,
                                             const DeviceProps& device = {},
                                             const ScalarValues& scalars = nullptr);
  // The symbol values (package order) that input tensors give (checked as bind_inputs does,
  // but for the extents that are expressions: check_expression_extents, once bound).
  std::vector<int64_t> symbols_of_inputs(const TensorMap& inputs, const std::string& file) const;
  // The symbol values (package order) that input shapes and scalar values give.
  std::vector<int64_t> symbols_of_shapes(const std::vector<std::vector<int64_t>>& shapes,
                                         const std::string& who,
                                         const ScalarValues& scalars = nullptr) const;
  // Checks the inputs' extents that are expressions against a binding of their symbols.
  void check_expression_extents(const Binding& b,
                                const std::vector<std::vector<int64_t>>& shapes,
                                const std::string& who) const;

  // The graph's interface in the form binding checks (inputs the caller passes, symbols,
  // the steps that bind them, the names of the constants).
  const BindingRules& rules() const { return rules_; }
  const std::vector<InputSpec>& input_specs() const { return rules_.inputs; }
  const std::vector<SymbolRange>& symbol_ranges() const { return rules_.symbols; }

  // Constants (Metadata.constants): their number and bytes (verified against their hash the
  // first time; a view into the package, valid as long as it is).
  size_t num_constants() const;
  std::string_view constant_bytes(size_t i) const;

  size_t cache_size() const;
  static constexpr size_t kCacheCapacity = 16;

 private:
  std::unique_ptr<PackageView> package_;
  uint64_t id_;
  BindingRules rules_;
  // Per bind step (rules_.steps): the program prefix Solve's k and c need, and their slots.
  std::vector<uint32_t> solve_ends_;
  std::vector<std::pair<uint32_t, uint32_t>> solve_kc_;
  std::string slot_text(uint32_t slot) const;  // a slot as a formula over the symbols
  mutable std::mutex mutex_;
  std::list<std::shared_ptr<const Binding>> cache_;  // most recently used first

  std::shared_ptr<const Binding> evaluate(const std::vector<int64_t>& symbols,
                                          const DeviceProps& device) const;
};

}  // namespace fuserc
