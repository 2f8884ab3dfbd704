#include "runtime/executable.h"

#include <atomic>

#include <algorithm>

#include "core/base/diagnostics.h"
#include "serde/reader/program_evaluator.h"
#include "serde/reader/program_printer.h"

namespace fuserc {

std::unique_ptr<Executable> Executable::load(const std::string& path) {
  return std::make_unique<Executable>(PackageView::open_file(path));
}

namespace {

// Solve steps' k and c from the package's size program, evaluated a prefix at a time: the
// writer put each step's slots before anything that uses the symbol it solves.
class ProgramSizes : public BindingSizes {
 public:
  ProgramSizes(const fb::Metadata& m, const std::string& file,
               const std::vector<uint32_t>& ends, const std::vector<std::pair<uint32_t, uint32_t>>& kc)
      : m_(m), file_(file), ends_(ends), kc_(kc) {}

  void solve_terms(size_t step, const std::vector<int64_t>& symbols, int64_t* k,
                   int64_t* c) override {
    if (slots_.empty()) slots_.resize(ends_[step] > 0 ? m_.program()->size() : 1);
    std::string error;
    if (!evaluate_program_range(*m_.program(), done_, ends_[step], symbols.data(), DeviceProps{},
                                slots_.data(), &error))
      throw UserError(SourcePlace{file_}, "cannot size this shape: " + error);
    done_ = std::max(done_, ends_[step]);
    *k = slots_[kc_[step].first];
    *c = slots_[kc_[step].second];
  }

 private:
  const fb::Metadata& m_;
  const std::string& file_;
  const std::vector<uint32_t>& ends_;
  const std::vector<std::pair<uint32_t, uint32_t>>& kc_;
  std::vector<int64_t> slots_;
  uint32_t done_ = 0;
};

}  // namespace

Executable::Executable(std::unique_ptr<PackageView> package) : package_(std::move(package)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1);
  const fb::Metadata& m = metadata();
  for (const auto* s : *m.symbols())
    rules_.symbols.push_back({s->name() ? s->name()->str() : "", s->min(), s->max()});
  std::vector<bool> bound(rules_.symbols.size(), false);
  std::vector<BindStepSpec> implied;  // packages of format 1 and 2: extents that are symbols
  for (uint32_t i = 0; i < m.inputs()->size(); ++i) {
    const fb::Tensor* t = m.inputs()->Get(i);
    InputSpec spec;
    spec.name = t->name()->str();
    spec.dtype = static_cast<DType>(t->dtype());
    spec.scalar = t->scalar();
    spec.sets_symbol = t->symbol();
    for (uint32_t d = 0; d < t->extents()->size(); ++d) {
      const fb::Extent* e = t->extents()->Get(d);
      ExtentSpec x;
      if (e->symbol() >= 0) {
        x.kind = ExtentSpec::Kind::Symbol;
        x.symbol = e->symbol();
        if (!bound[e->symbol()]) {
          bound[e->symbol()] = true;
          implied.push_back({BindStepSpec::Kind::Extent, e->symbol(), static_cast<int>(i),
                             static_cast<int>(d)});
        }
      } else if (e->symbol() == -1) {
        x.kind = ExtentSpec::Kind::Fixed;
        x.value = e->value();
      } else {
        x.kind = ExtentSpec::Kind::Expression;
        x.text = slot_text(t->shape_slots()->Get(d));
      }
      spec.shape.push_back(x);
    }
    rules_.inputs.push_back(std::move(spec));
  }
  auto corrupted = [&](const char* what) {
    throw UserError(SourcePlace{package_->name()}, std::string("corrupted package: ") + what);
  };
  const size_t nsym = rules_.symbols.size(), slots = m.program()->size();
  for (const auto& in : rules_.inputs)
    if (in.sets_symbol >= 0 &&
        (static_cast<size_t>(in.sets_symbol) >= nsym || !in.scalar ||
         (in.dtype != DType::I32 && in.dtype != DType::I64)))
      corrupted("an input sets a symbol it cannot");
  if (m.bind_steps()) {
    for (const fb::BindStep* s : *m.bind_steps()) {
      if (s->symbol() >= nsym || s->input() >= rules_.inputs.size())
        corrupted("a binding step names an unknown symbol or input");
      const InputSpec& in = rules_.inputs[s->input()];
      bool ok = true;
      switch (s->kind()) {
        case fb::BindKind::Extent: ok = s->dim() < in.shape.size(); break;
        case fb::BindKind::Scalar: ok = in.sets_symbol == static_cast<int>(s->symbol()); break;
        case fb::BindKind::Solve:
          ok = s->dim() < in.shape.size() && s->program_end() <= slots &&
               s->k_slot() < s->program_end() && s->c_slot() < s->program_end();
          break;
        default: ok = false;
      }
      if (!ok) corrupted("a binding step is inconsistent");
      BindStepSpec step;
      step.kind = s->kind() == fb::BindKind::Extent   ? BindStepSpec::Kind::Extent
                  : s->kind() == fb::BindKind::Scalar ? BindStepSpec::Kind::Scalar
                                                      : BindStepSpec::Kind::Solve;
      step.symbol = static_cast<int>(s->symbol());
      step.input = static_cast<int>(s->input());
      step.dim = static_cast<int>(s->dim());
      rules_.steps.push_back(step);
      solve_ends_.push_back(s->program_end());
      solve_kc_.emplace_back(s->k_slot(), s->c_slot());
    }
  } else {
    rules_.steps = implied;
    solve_ends_.assign(implied.size(), 0);
    solve_kc_.assign(implied.size(), {0, 0});
  }
  if (m.constants())
    for (const auto* c : *m.constants()) rules_.constants.push_back(c->name()->str());
}

std::string Executable::slot_text(uint32_t slot) const {
  return slot_formula(metadata(), slot);
}

size_t Executable::num_constants() const {
  return metadata().constants() ? metadata().constants()->size() : 0;
}

std::string_view Executable::constant_bytes(size_t i) const {
  return package_->constant_data(*metadata().constants()->Get(static_cast<uint32_t>(i)));
}

std::shared_ptr<const Binding> Executable::evaluate(const std::vector<int64_t>& symbols,
                                                    const DeviceProps& device) const {
  const fb::Metadata& m = metadata();
  const std::string& file = package_->name();
  for (size_t i = 0; i < symbols.size(); ++i) {
    const SymbolRange& r = rules_.symbols[i];
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
    if (launch->matmul() >= 0) {
      b->kernel_of.push_back(kLibraryStep);
      continue;
    }
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
  if (symbols.size() != rules_.symbols.size())
    throw InternalError("bind: " + std::to_string(symbols.size()) + " symbol values for " +
                        std::to_string(rules_.symbols.size()) + " symbols");
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
  auto shapes = shapes_of_tensors(rules_, inputs, file);
  auto b = bind(symbols_of_inputs(inputs, file), device);
  check_expression_extents(*b, shapes, file);
  return b;
}

std::vector<int64_t> Executable::symbols_of_inputs(const TensorMap& inputs,
                                                   const std::string& file) const {
  auto shapes = shapes_of_tensors(rules_, inputs, file);
  return symbols_of_shapes(
      shapes, file, [&](size_t i) { return scalar_value_of(rules_, inputs, i); });
}

std::shared_ptr<const Binding> Executable::bind_shapes(
    const std::vector<std::vector<int64_t>>& shapes, const std::string& who,
    const DeviceProps& device, const ScalarValues& scalars) {
  auto b = bind(symbols_of_shapes(shapes, who, scalars), device);
  check_expression_extents(*b, shapes, who);
  return b;
}

std::vector<int64_t> Executable::symbols_of_shapes(const std::vector<std::vector<int64_t>>& shapes,
                                                   const std::string& who,
                                                   const ScalarValues& scalars) const {
  ProgramSizes sizes(metadata(), who, solve_ends_, solve_kc_);
  auto scalar = [&](size_t i) -> int64_t {
    if (!scalars)
      throw UserError(SourcePlace{who},
                      "scalar input " + quote(rules_.inputs[i].name) + " sets symbol " +
                          quote(rules_.symbols[rules_.inputs[i].sets_symbol].name) +
                          ": binding needs its value, not only the inputs' shapes");
    return scalars(i);
  };
  return bind_symbols(rules_, sizes, shapes, scalar, who);
}

void Executable::check_expression_extents(const Binding& b,
                                          const std::vector<std::vector<int64_t>>& shapes,
                                          const std::string& who) const {
  const fb::Metadata& m = metadata();
  fuserc::check_expression_extents(
      rules_, shapes,
      [&](size_t i, size_t d) {
        return b.slot(m.inputs()->Get(static_cast<uint32_t>(i))->shape_slots()->Get(
            static_cast<uint32_t>(d)));
      },
      who);
}

size_t Executable::cache_size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

}  // namespace fuserc
