#include "runtime/executable.h"

#include <atomic>

#include "core/base/diagnostics.h"
#include "serde/reader/program_evaluator.h"

namespace fuserc {

std::unique_ptr<Executable> Executable::load(const std::string& path) {
  return std::make_unique<Executable>(PackageView::open_file(path));
}

Executable::Executable(std::unique_ptr<PackageView> package) : package_(std::move(package)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1);
  const fb::Metadata& m = metadata();
  for (const auto* s : *m.symbols())
    symbol_ranges_.push_back({s->name() ? s->name()->str() : "", s->min(), s->max()});
  for (const auto* t : *m.inputs()) {
    InputSpec spec;
    spec.name = t->name()->str();
    spec.dtype = static_cast<DType>(t->dtype());
    spec.scalar = t->scalar();
    for (const auto* e : *t->extents()) {
      ExtentSpec x;
      if (e->symbol() >= 0)
        x.symbol = symbol_ranges_[e->symbol()].name;
      else
        x.value = e->value();
      spec.shape.push_back(x);
    }
    input_specs_.push_back(std::move(spec));
  }
}

std::shared_ptr<const Binding> Executable::evaluate(const std::vector<int64_t>& symbols,
                                                    const DeviceProps& device) const {
  const fb::Metadata& m = metadata();
  const std::string& file = package_->name();
  for (size_t i = 0; i < symbols.size(); ++i) {
    const SymbolRange& r = symbol_ranges_[i];
    if (symbols[i] < r.min || symbols[i] > r.max)
      throw UserError(SourcePlace{file}, "symbol '" + r.name + "' = " + std::to_string(symbols[i]) +
                                             " is outside its range [" + std::to_string(r.min) +
                                             ", " + std::to_string(r.max) + "]");
  }
  auto b = std::make_shared<Binding>();
  b->symbols = symbols;
  b->device = device;
  b->slots.resize(m.program()->size());
  std::string error;
  if (!evaluate_program(*m.program(), symbols.data(), device, b->slots.data(), &error))
    throw UserError(SourcePlace{file}, "cannot size this shape: " + error);
  for (const auto* launch : *m.plan()) {
    uint32_t chosen = launch->variants()->Get(launch->variants()->size() - 1)->kernel();
    for (const auto* v : *launch->variants())
      if (b->slots[v->condition_slot()] != 0) {
        chosen = v->kernel();
        break;
      }
    const fb::Kernel* k = m.kernels()->Get(chosen);
    for (const auto* g : *k->guards())
      if (b->slots[g->slot()] == 0)
        throw UserError(SourcePlace{file}, "cannot launch: " + g->message()->str());
    b->kernel_of.push_back(chosen);
  }
  return b;
}

std::shared_ptr<const Binding> Executable::bind(const std::vector<int64_t>& symbols,
                                                const DeviceProps& given) {
  if (symbols.size() != symbol_ranges_.size())
    throw InternalError("bind: " + std::to_string(symbols.size()) + " symbol values for " +
                        std::to_string(symbol_ranges_.size()) + " symbols");
  const DeviceProps device = device_props_clamped(given);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if ((*it)->symbols == symbols && (*it)->device == device) {
        auto hit = *it;
        cache_.splice(cache_.begin(), cache_, it);
        return hit;
      }
    }
  }
  auto b = evaluate(symbols, device);
  std::lock_guard<std::mutex> lock(mutex_);
  cache_.push_front(b);
  if (cache_.size() > kCacheCapacity) cache_.pop_back();
  return b;
}

std::shared_ptr<const Binding> Executable::bind_inputs(const TensorMap& inputs,
                                                       const std::string& file,
                                                       const DeviceProps& device) {
  return bind(symbols_of_inputs(inputs, file), device);
}

std::vector<int64_t> Executable::symbols_of_inputs(const TensorMap& inputs,
                                                   const std::string& file) const {
  return symbols_of(fuserc::bind_inputs(input_specs_, symbol_ranges_, inputs, file));
}

std::shared_ptr<const Binding> Executable::bind_shapes(
    const std::vector<std::vector<int64_t>>& shapes, const std::string& who,
    const DeviceProps& device) {
  return bind(symbols_of_shapes(shapes, who), device);
}

std::vector<int64_t> Executable::symbols_of_shapes(const std::vector<std::vector<int64_t>>& shapes,
                                                   const std::string& who) const {
  return symbols_of(fuserc::bind_input_shapes(input_specs_, symbol_ranges_, shapes, who));
}

std::vector<int64_t> Executable::symbols_of(const SymbolValues& values) const {
  std::vector<int64_t> symbols;
  for (const auto& r : symbol_ranges_) {
    auto it = values.find(r.name);
    // A symbol no input binds is unused by the kernels; its hint-free minimum is as good as any.
    symbols.push_back(it == values.end() ? r.min : it->second);
  }
  return symbols;
}

size_t Executable::cache_size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

}  // namespace fuserc
