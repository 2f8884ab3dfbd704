#include "serde/compiled_view.h"

#include "fuserc/version.h"
#include "serde/expr_program.h"
#include "serde/reader/package_layout.h"
#include "serde/reader/program_printer.h"

namespace fuserc {
namespace {

using nlohmann::json;

std::string hex64(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = digits[v & 15];
  return s;
}

std::string sm(int arch) {
  return "sm_" + std::to_string(arch);
}

class ViewBuilder {
 public:
  explicit ViewBuilder(const CompiledFusion& c) : c_(c), f_(c.fusion), program_(names(c.fusion)) {}

  json build() {
    json symbols = json::array();
    for (const auto& s : f_.symbols)
      symbols.push_back({{"name", s.name}, {"min", s.min}, {"max", s.max}, {"hint", s.hint}});
    json inputs = json::array(), outputs = json::array(), constants = json::array();
    for (ValueId v : f_.inputs) {
      const Value& val = f_.value(v);
      if (!val.is_constant()) {
        callers_.push_back(v);
        inputs.push_back(tensor(v, kNoValue));
        continue;
      }
      json shape = json::array();
      for (const auto& e : val.shape) shape.push_back(e.value());
      constants.push_back({{"name", val.name},
                           {"dtype", dtype_name(val.dtype)},
                           {"shape", shape},
                           {"bytes", val.constant->size()},
                           {"hash", hex64(val.constant->hash())},
                           {"stored", c_.external(val) ? "external" : "inline"}});
    }
    for (ValueId v : f_.outputs) outputs.push_back(tensor(v, alias_of(v)));
    json binding = json::array();
    for (const auto& s : f_.bind_steps) {
      const Value& in = f_.value(f_.inputs[s.input]);
      json j = {{"symbol", s.symbol}, {"input", in.name}};
      if (s.kind == SymbolBindStep::Kind::Scalar) {
        j["from"] = "scalar";
      } else {
        j["from"] = s.kind == SymbolBindStep::Kind::Solve ? "solve" : "extent";
        j["dim"] = s.dim;
        if (s.kind == SymbolBindStep::Kind::Solve) j["extent"] = formula(in.shape[s.dim]);
      }
      binding.push_back(j);
    }
    json buffers = json::array();
    for (const auto& b : c_.memory.buffers) {
      const Value& v = f_.value(b.value);
      json j = {{"name", v.name},
                {"kind", kind(b.kind)},
                {"dtype", dtype_name(v.dtype)},
                {"bytes", formula(b.bytes)}};
      if (b.kind == BufferInfo::Kind::Intermediate) j["offset"] = formula(b.offset);
      if (b.alias_input >= 0) j["in_place_of"] = f_.value(callers_.at(b.alias_input)).name;
      buffers.push_back(j);
    }
    json plan = json::array();
    size_t library_steps = 0;
    for (const auto& step : c_.plan) {
      if (step.library >= 0) ++library_steps;
      json variants = json::array();
      for (size_t i = 0; i < step.kernels.size(); ++i)
        variants.push_back({{"kernel", c_.kernels[step.kernels[i]].name},
                            {"when", formula(step.conditions[i])},
                            {"reason", i < step.reasons.size() ? step.reasons[i] : ""}});
      json reads = json::array(), writes = json::array();
      for (ValueId v : step_reads(c_, step)) reads.push_back(buffer_name(v));
      for (ValueId v : step_writes(c_, step)) writes.push_back(buffer_name(v));
      json entry = {{"variants", variants}, {"reads", reads}, {"writes", writes}};
      if (step.library >= 0) entry["library"] = c_.matmuls[step.library].name;
      plan.push_back(entry);
    }
    json library = json::array();
    for (const MatmulCall& mm : c_.matmuls) library.push_back(matmul(mm));
    json kernels = json::array();
    for (const auto& k : c_.kernels) kernels.push_back(kernel(k));
    json archs = json::array();
    for (int a : c_.archs) archs.push_back(sm(a));
    return {{"name", f_.name},
            {"format_version", kPackageFormatVersion},
            {"fuserc_version", FUSERC_VERSION_STRING},
            {"nvrtc_version", c_.nvrtc_version},
            {"archs", archs},
            {"symbols", symbols},
            {"inputs", inputs},
            {"outputs", outputs},
            {"constants", constants},
            {"binding", binding},
            {"buffers", buffers},
            {"workspace", formula(c_.memory.workspace_bytes)},
            {"kernels_per_run", plan.size() - library_steps},
            {"library_steps_per_run", library_steps},
            {"plan", plan},
            {"kernels", kernels},
            {"library_steps", library}};
  }

 private:
  const CompiledFusion& c_;
  const Fusion& f_;
  ProgramBuilder program_;
  std::vector<ValueId> callers_;  // the inputs the caller passes, in package order

  static std::vector<std::string> names(const Fusion& f) {
    std::vector<std::string> n;
    for (const auto& s : f.symbols) n.push_back(s.name);
    return n;
  }

  std::string formula(const Expr& e) {
    uint32_t slot = program_.slot(e);
    const auto& instrs = program_.instructions();
    ProgramView view{instrs.data(), instrs.size(),
                     [this](int64_t i) { return f_.symbols[static_cast<size_t>(i)].name; }};
    return slot_formula(view, slot);
  }

  static const char* kind(BufferInfo::Kind k) {
    switch (k) {
      case BufferInfo::Kind::Input: return "input";
      case BufferInfo::Kind::Output: return "output";
      case BufferInfo::Kind::Intermediate: return "intermediate";
      case BufferInfo::Kind::Constant: return "constant";
    }
    return "?";
  }

  // The input an output lives in: the one it is written into in place (for an input listed as
  // an output and written in place, itself).
  ValueId alias_of(ValueId v) const {
    for (const auto& [out, in] : f_.aliases)
      if (out == f_.updated_value(v)) return in;
    return kNoValue;
  }

  std::string buffer_name(ValueId v) const {
    return f_.value(c_.memory.buffers[c_.memory.buffer_of.at(v)].value).name;
  }

  json tensor(ValueId id, ValueId alias) {
    const Value& v = f_.value(id);
    json shape = json::array();
    for (const auto& e : v.shape) shape.push_back(formula(e));
    json j = {{"name", v.name}, {"dtype", dtype_name(v.dtype)}, {"shape", shape}};
    if (v.scalar_input) j["scalar"] = true;
    if (!v.sets_symbol.empty()) j["sets_symbol"] = v.sets_symbol;
    if (!v.strides.empty()) {
      json strides = json::array();
      for (const auto& e : v.strides) strides.push_back(formula(e));
      j["strides"] = strides;
    }
    if (alias != kNoValue) j["in_place_of"] = f_.value(alias).name;
    return j;
  }

  json matmul(const MatmulCall& mm) {
    static const char* kEpilogue[] = {"none", "relu", "gelu", "gelu_tanh"};
    auto operand = [&](const MatmulLayout& l) {
      return json{{"buffer", buffer_name(l.value)},
                  {"dtype", dtype_name(l.dtype)},
                  {"row_stride", formula(l.row_stride)},
                  {"col_stride", formula(l.col_stride)},
                  {"batch_stride", formula(l.batch_stride)},
                  {"outer_stride", formula(l.outer_stride)},
                  {"offset", formula(l.offset)}};
    };
    json j = {{"name", mm.name},
              {"comment", mm.comment},
              {"m", formula(mm.m)},
              {"n", formula(mm.n)},
              {"k", formula(mm.k)},
              {"batch", formula(mm.batch)},
              {"outer", formula(mm.outer)},
              {"a", operand(mm.a)},
              {"b", operand(mm.b)},
              {"c", operand(mm.c)},
              {"epilogue", kEpilogue[static_cast<int>(mm.epilogue)]},
              {"allow_tf32", mm.allow_tf32},
              {"workspace", formula(mm.workspace_bytes)}};
    if (mm.bias.value != kNoValue) j["bias"] = operand(mm.bias);
    return j;
  }

  json kernel(const KernelSummary& k) {
    json params = json::object();
    for (const auto& [key, value] : k.scheduler_params) params[key] = value;
    json archs = json::array(), regs = json::object(), spills = json::object(),
         shared = json::object(), stack = json::object();
    for (const auto& b : k.binaries) {
      archs.push_back(sm(b.arch));
      regs[sm(b.arch)] = b.registers;
      spills[sm(b.arch)] = b.spill_store_bytes + b.spill_load_bytes;
      shared[sm(b.arch)] = b.shared_bytes;
      stack[sm(b.arch)] = b.local_bytes;
    }
    json grid = json::array(), block = json::array();
    for (const auto& e : k.grid) grid.push_back(formula(e));
    for (const auto& e : k.block) block.push_back(formula(e));
    json args = json::array();
    for (const auto& a : k.args) {
      json arg = {{"name", a.name},
                  {"role", arg_role_name(a.role)},
                  {"dtype", dtype_name(a.dtype)},
                  {"c_type", a.c_type}};
      if (a.role == KernelArg::Role::Symbol)
        arg["symbol"] = a.symbol;
      else if (a.role == KernelArg::Role::Scalar)
        arg["input"] = f_.value(a.value).name;
      else if (a.role == KernelArg::Role::Workspace)
        arg["allocation"] = a.allocation;
      else if (a.role == KernelArg::Role::Size)
        arg["size"] = formula(a.size);
      else
        arg["buffer"] = buffer_name(a.value);
      args.push_back(arg);
    }
    json allocations = json::array();
    for (const auto& al : k.allocations)
      allocations.push_back({{"bytes", formula(al.bytes)}, {"zero_init", al.zero_init}});
    json guards = json::array();
    for (const auto& g : k.guards)
      guards.push_back({{"kind", guard_kind(g.kind)},
                        {"holds_when", formula(g.condition)},
                        {"message", g.message}});
    json values = json::object();
    for (const auto& lv : k.launch_values) values[lv.name] = formula(lv.value);
    json flags = json::array();
    if (k.index64) flags.push_back("index64");
    if (k.uses_rng) flags.push_back("rng");
    if (k.block_reduction) flags.push_back("block_reduction");
    if (k.grid_reduction) flags.push_back("grid_reduction");
    if (k.cooperative) flags.push_back("cooperative");
    return {{"name", k.name},
            {"scheduler", scheduler_name(k.scheduler)},
            {"params", params},
            {"comment", k.comment},
            {"archs", archs},
            {"registers", regs},
            {"spill_bytes", spills},
            {"shared_bytes", shared},
            {"stack_bytes", stack},
            {"ptx_arch", sm(k.ptx_arch)},
            {"min_compute_capability", k.min_compute_capability},
            {"grid", grid},
            {"block", block},
            {"dynamic_shared_bytes", formula(k.dynamic_shared_bytes)},
            {"allocations", allocations},
            {"args", args},
            {"guards", guards},
            {"flags", flags},
            {"compile_options", k.compile_options},
            {"variant_note", k.variant_note},
            {"launch_values", values},
            {"source_bytes", k.source.size()},
            {"ptx_bytes", k.ptx.size()}};
  }

  static const char* guard_kind(KernelGuard::Kind k) {
    switch (k) {
      case KernelGuard::Kind::IndexWidth: return "index_width";
      case KernelGuard::Kind::SymbolRange: return "symbol_range";
      case KernelGuard::Kind::LaunchLimit: return "launch_limit";
      case KernelGuard::Kind::Other: return "other";
    }
    return "?";
  }
};

}  // namespace

nlohmann::json compiled_view(const CompiledFusion& c) {
  return ViewBuilder(c).build();
}

}  // namespace fuserc
