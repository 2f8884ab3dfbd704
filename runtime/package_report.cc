#include "core/base/text_util.h"
#include "runtime/package_report.h"

#include <cstdio>
#include <sstream>

#include "core/base/dtype.h"
#include "serde/reader/program_printer.h"

namespace fuserc {
namespace {

using nlohmann::json;

const char* role_name(fb::ArgRole r) {
  switch (r) {
    case fb::ArgRole::Input: return "input";
    case fb::ArgRole::Output: return "output";
    case fb::ArgRole::Scalar: return "scalar";
    case fb::ArgRole::Symbol: return "symbol";
    case fb::ArgRole::Workspace: return "workspace";
    case fb::ArgRole::Size: return "size";
  }
  return "?";
}

const char* buffer_kind(fb::BufferKind k) {
  switch (k) {
    case fb::BufferKind::Input: return "input";
    case fb::BufferKind::Output: return "output";
    case fb::BufferKind::Intermediate: return "intermediate";
    case fb::BufferKind::Constant: return "constant";
  }
  return "?";
}

const char* guard_kind(fb::GuardKind k) {
  switch (k) {
    case fb::GuardKind::IndexWidth: return "index_width";
    case fb::GuardKind::SymbolRange: return "symbol_range";
    case fb::GuardKind::LaunchLimit: return "launch_limit";
    case fb::GuardKind::Other: return "other";
  }
  return "?";
}

std::string dtype_of(fb::DType d) {
  return dtype_name(static_cast<DType>(d));
}
std::string sm(int arch) {
  return "sm_" + std::to_string(arch);
}

json tensor_json(const fb::Metadata& m, const fb::Tensor& t) {
  json shape = json::array();
  for (uint32_t s : *t.shape_slots()) shape.push_back(slot_formula(m, s));
  json j = {{"name", t.name()->str()}, {"dtype", dtype_of(t.dtype())}, {"shape", shape}};
  if (t.scalar()) j["scalar"] = true;
  if (t.stride_slots()->size()) {
    json strides = json::array();
    for (uint32_t s : *t.stride_slots()) strides.push_back(slot_formula(m, s));
    j["strides"] = strides;
  }
  if (t.alias_input() >= 0) j["in_place_of"] = m.inputs()->Get(t.alias_input())->name()->str();
  if (t.symbol() >= 0) j["sets_symbol"] = m.symbols()->Get(t.symbol())->name()->str();
  return j;
}

std::string hex64(uint64_t v) {
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// How each symbol is bound at run time, in order.
json binding_json(const fb::Metadata& m) {
  json steps = json::array();
  if (!m.bind_steps()) return steps;
  for (const fb::BindStep* s : *m.bind_steps()) {
    const fb::Tensor* in = m.inputs()->Get(s->input());
    json j = {{"symbol", m.symbols()->Get(s->symbol())->name()->str()},
              {"input", in->name()->str()}};
    switch (s->kind()) {
      case fb::BindKind::Extent:
        j["from"] = "extent";
        j["dim"] = s->dim();
        break;
      case fb::BindKind::Scalar: j["from"] = "scalar"; break;
      case fb::BindKind::Solve:
        j["from"] = "solve";
        j["dim"] = s->dim();
        j["extent"] = slot_formula(m, in->shape_slots()->Get(s->dim()));
        break;
      default: j["from"] = "?";
    }
    steps.push_back(j);
  }
  return steps;
}

const char* epilogue_name(fb::MatmulEpilogue e) {
  switch (e) {
    case fb::MatmulEpilogue::None: return "none";
    case fb::MatmulEpilogue::Relu: return "relu";
    case fb::MatmulEpilogue::Gelu: return "gelu";
    case fb::MatmulEpilogue::GeluTanh: return "gelu_tanh";
  }
  return "?";
}

// The library steps (matrix products): every size and stride as a formula.
json matmuls_json(const fb::Metadata& m) {
  json list = json::array();
  if (!m.matmuls()) return list;
  auto operand = [&](const fb::MatmulOperand* o) {
    return json{{"buffer", m.buffers()->Get(static_cast<uint32_t>(o->buffer()))->name()->str()},
                {"dtype", dtype_of(o->dtype())},
                {"row_stride", slot_formula(m, o->row_stride_slot())},
                {"col_stride", slot_formula(m, o->col_stride_slot())},
                {"batch_stride", slot_formula(m, o->batch_stride_slot())},
                {"outer_stride", slot_formula(m, o->outer_stride_slot())},
                {"offset", o->offset_slot() < 0
                               ? std::string("0")
                               : slot_formula(m, static_cast<uint32_t>(o->offset_slot()))}};
  };
  for (const auto* mm : *m.matmuls()) {
    json j = {{"name", mm->name()->str()},
              {"comment", mm->comment()->str()},
              {"m", slot_formula(m, mm->m_slot())},
              {"n", slot_formula(m, mm->n_slot())},
              {"k", slot_formula(m, mm->k_slot())},
              {"batch", slot_formula(m, mm->batch_slot())},
              {"outer", slot_formula(m, mm->outer_slot())},
              {"a", operand(mm->a())},
              {"b", operand(mm->b())},
              {"c", operand(mm->c())},
              {"epilogue", epilogue_name(mm->epilogue())},
              {"allow_tf32", mm->allow_tf32()},
              {"workspace", slot_formula(m, mm->workspace_slot())}};
    if (mm->bias()->buffer() >= 0) j["bias"] = operand(mm->bias());
    list.push_back(j);
  }
  return list;
}

json constants_json(const fb::Metadata& m) {
  json list = json::array();
  if (!m.constants()) return list;
  for (const auto* c : *m.constants()) {
    json shape = json::array();
    for (int64_t e : *c->shape()) shape.push_back(e);
    list.push_back({{"name", c->name()->str()},
                    {"dtype", dtype_of(c->dtype())},
                    {"shape", shape},
                    {"bytes", c->data()->size()},
                    {"hash", hex64(c->data()->hash())},
                    {"stored", c->external() ? "external" : "inline"}});
  }
  return list;
}

json kernel_json(const fb::Metadata& m, const fb::Kernel& k) {
  json params = json::object();
  for (const auto* p : *k.params()) params[p->key()->str()] = p->value()->str();
  json archs = json::array(), regs = json::object(), spills = json::object(),
       shared = json::object(), local = json::object();
  for (const auto* b : *k.binaries()) {
    archs.push_back(sm(b->arch()));
    regs[sm(b->arch())] = b->registers();
    spills[sm(b->arch())] = b->spill_store_bytes() + b->spill_load_bytes();
    shared[sm(b->arch())] = b->shared_bytes();
    local[sm(b->arch())] = b->local_bytes();
  }
  json grid = json::array(), block = json::array();
  for (uint32_t s : *k.grid()) grid.push_back(slot_formula(m, s));
  for (uint32_t s : *k.block()) block.push_back(slot_formula(m, s));
  json args = json::array();
  for (const auto* a : *k.args()) {
    json arg = {{"name", a->name()->str()},
                {"role", role_name(a->role())},
                {"dtype", dtype_of(a->dtype())},
                {"c_type", a->c_type()->str()}};
    if (a->buffer() >= 0) arg["buffer"] = m.buffers()->Get(a->buffer())->name()->str();
    if (a->symbol() >= 0) arg["symbol"] = m.symbols()->Get(a->symbol())->name()->str();
    if (a->input() >= 0) arg["input"] = m.inputs()->Get(a->input())->name()->str();
    if (a->allocation() >= 0) arg["allocation"] = a->allocation();
    if (a->role() == fb::ArgRole::Size) arg["size"] = slot_formula(m, a->slot());
    args.push_back(arg);
  }
  json allocations = json::array();
  if (k.allocations())
    for (const auto* al : *k.allocations())
      allocations.push_back(
          {{"bytes", slot_formula(m, al->bytes_slot())}, {"zero_init", al->zero_init()}});
  json guards = json::array();
  for (const auto* g : *k.guards())
    guards.push_back({{"kind", guard_kind(g->kind())},
                      {"holds_when", slot_formula(m, g->slot())},
                      {"message", g->message()->str()}});
  json options = json::array();
  for (const auto* o : *k.compile_options()) options.push_back(o->str());
  json values = json::object();
  if (k.launch_values())
    for (const auto* v : *k.launch_values()) values[v->name()->str()] = slot_formula(m, v->slot());
  json flags = json::array();
  if (k.index64()) flags.push_back("index64");
  if (k.uses_rng()) flags.push_back("rng");
  if (k.block_reduction()) flags.push_back("block_reduction");
  if (k.grid_reduction()) flags.push_back("grid_reduction");
  if (k.cooperative()) flags.push_back("cooperative");
  return {{"name", k.name()->str()},
          {"scheduler", k.scheduler()->str()},
          {"params", params},
          {"comment", k.comment() ? k.comment()->str() : ""},
          {"archs", archs},
          {"registers", regs},
          {"spill_bytes", spills},
          {"shared_bytes", shared},
          {"stack_bytes", local},
          {"ptx_arch", sm(k.ptx_arch())},
          {"min_compute_capability", k.min_compute_capability()},
          {"grid", grid},
          {"block", block},
          {"dynamic_shared_bytes", slot_formula(m, k.dynamic_smem_slot())},
          {"allocations", allocations},
          {"args", args},
          {"guards", guards},
          {"flags", flags},
          {"compile_options", options},
          {"variant_note", k.variant_note() ? k.variant_note()->str() : ""},
          {"launch_values", values},
          {"source_bytes", k.source()->size()},
          {"ptx_bytes", k.ptx()->size()}};
}

// Global-memory traffic: each launch reads every buffer it reads and writes every buffer it
// writes once (global_bytes sums them over the plan); min_global_bytes is the graph's inputs
// read once and its outputs written once, the least any plan can move.
struct Traffic {
  std::vector<int64_t> launches;
  int64_t global = 0, minimum = 0;
};

Traffic traffic_of(const fb::Metadata& m, const Binding& b) {
  Traffic t;
  std::vector<bool> read(m.buffers()->size(), false);
  for (const auto* l : *m.plan()) {
    int64_t bytes = 0;
    for (uint32_t buf : *l->reads()) {
      bytes += b.slot(m.buffers()->Get(buf)->bytes_slot());
      read[buf] = true;
    }
    for (uint32_t buf : *l->writes()) bytes += b.slot(m.buffers()->Get(buf)->bytes_slot());
    t.launches.push_back(bytes);
    t.global += bytes;
  }
  for (uint32_t i = 0; i < m.buffers()->size(); ++i) {
    const fb::Buffer* buf = m.buffers()->Get(i);
    const bool input =
        buf->kind() == fb::BufferKind::Input || buf->kind() == fb::BufferKind::Constant;
    if ((input && read[i]) || buf->kind() == fb::BufferKind::Output)
      t.minimum += b.slot(buf->bytes_slot());
  }
  return t;
}

json bound_json(const fb::Metadata& m, const Binding& b) {
  json symbols = json::object();
  for (uint32_t i = 0; i < m.symbols()->size(); ++i)
    symbols[m.symbols()->Get(i)->name()->str()] = b.symbols[i];
  Traffic traffic = traffic_of(m, b);
  json launches = json::array();
  for (uint32_t l = 0; l < m.plan()->size(); ++l) {
    if (b.kernel_of[l] == kLibraryStep) {
      const fb::Matmul* mm =
          m.matmuls()->Get(static_cast<uint32_t>(m.plan()->Get(l)->matmul()));
      launches.push_back({{"library", mm->name()->str()},
                          {"m", b.slot(mm->m_slot())},
                          {"n", b.slot(mm->n_slot())},
                          {"k", b.slot(mm->k_slot())},
                          {"batch", b.slot(mm->batch_slot())},
                          {"outer", b.slot(mm->outer_slot())},
                          {"workspace_bytes", b.slot(mm->workspace_slot())},
                          {"global_bytes", traffic.launches[l]}});
      continue;
    }
    const fb::Kernel* k = m.kernels()->Get(b.kernel_of[l]);
    json grid = json::array(), block = json::array();
    for (uint32_t s : *k->grid()) grid.push_back(b.slot(s));
    for (uint32_t s : *k->block()) block.push_back(b.slot(s));
    std::string reason;
    for (const auto* v : *m.plan()->Get(l)->variants())
      if (v->kernel() == b.kernel_of[l] && v->reason()) reason = v->reason()->str();
    json values = json::object();
    if (k->launch_values())
      for (const auto* v : *k->launch_values()) values[v->name()->str()] = b.slot(v->slot());
    launches.push_back({{"kernel", k->name()->str()},
                        {"reason", reason},
                        {"note", k->variant_note() ? k->variant_note()->str() : ""},
                        {"grid", grid},
                        {"block", block},
                        {"dynamic_shared_bytes", b.slot(k->dynamic_smem_slot())},
                        {"values", values},
                        {"global_bytes", traffic.launches[l]}});
  }
  json buffers = json::object();
  for (const auto* buf : *m.buffers()) buffers[buf->name()->str()] = b.slot(buf->bytes_slot());
  double ratio = traffic.minimum > 0
                     ? static_cast<double>(traffic.global) / static_cast<double>(traffic.minimum)
                     : 1.0;
  // The device beside the symbols, never among them: memory sizes read the symbols only.
  return {{"symbols", symbols},
          {"device", {{"sm_count", b.device.sm_count}}},
          {"launches", launches},
          {"buffer_bytes", buffers},
          {"workspace_bytes", b.slot(m.workspace_bytes_slot())},
          {"global_bytes", traffic.global},
          {"min_global_bytes", traffic.minimum},
          {"traffic_ratio", ratio}};
}

}  // namespace

json package_json(const Executable& exe, const Binding* bound) {
  const fb::Metadata& m = exe.metadata();
  json symbols = json::array();
  for (const auto* s : *m.symbols())
    symbols.push_back(
        {{"name", s->name()->str()}, {"min", s->min()}, {"max", s->max()}, {"hint", s->hint()}});
  json inputs = json::array(), outputs = json::array();
  for (const auto* t : *m.inputs()) inputs.push_back(tensor_json(m, *t));
  for (const auto* t : *m.outputs()) outputs.push_back(tensor_json(m, *t));
  json buffers = json::array();
  for (const auto* b : *m.buffers()) {
    json j = {{"name", b->name()->str()},
              {"kind", buffer_kind(b->kind())},
              {"dtype", dtype_of(b->dtype())},
              {"bytes", slot_formula(m, b->bytes_slot())}};
    if (b->kind() == fb::BufferKind::Intermediate) j["offset"] = slot_formula(m, b->offset_slot());
    if (b->alias_input() >= 0) j["in_place_of"] = m.inputs()->Get(b->alias_input())->name()->str();
    buffers.push_back(j);
  }
  json plan = json::array();
  size_t library_steps = 0;
  for (const auto* l : *m.plan()) {
    if (l->matmul() >= 0) ++library_steps;
    json variants = json::array();
    for (const auto* v : *l->variants())
      variants.push_back({{"kernel", m.kernels()->Get(v->kernel())->name()->str()},
                          {"when", slot_formula(m, v->condition_slot())},
                          {"reason", v->reason() ? v->reason()->str() : ""}});
    json reads = json::array(), writes = json::array();
    for (uint32_t b : *l->reads()) reads.push_back(m.buffers()->Get(b)->name()->str());
    for (uint32_t b : *l->writes()) writes.push_back(m.buffers()->Get(b)->name()->str());
    json step = {{"variants", variants}, {"reads", reads}, {"writes", writes}};
    if (l->matmul() >= 0)
      step["library"] = m.matmuls()->Get(static_cast<uint32_t>(l->matmul()))->name()->str();
    plan.push_back(step);
  }
  json kernels = json::array();
  for (const auto* k : *m.kernels()) kernels.push_back(kernel_json(m, *k));
  json archs = json::array();
  for (int a : *m.provenance()->archs()) archs.push_back(sm(a));
  json j = {{"name", m.name()->str()},
            {"format_version", m.format_version()},
            {"fuserc_version", m.provenance()->fuserc_version()->str()},
            {"nvrtc_version", m.provenance()->nvrtc_version()->str()},
            {"archs", archs},
            {"size_bytes", exe.package().size()},
            {"symbols", symbols},
            {"inputs", inputs},
            {"outputs", outputs},
            {"constants", constants_json(m)},
            {"binding", binding_json(m)},
            {"buffers", buffers},
            {"workspace", slot_formula(m, m.workspace_bytes_slot())},
            {"kernels_per_run", plan.size() - library_steps},
            {"library_steps_per_run", library_steps},
            {"plan", plan},
            {"kernels", kernels},
            {"library_steps", matmuls_json(m)}};
  if (bound) j["bound"] = bound_json(m, *bound);
  return j;
}

std::string package_text(const Executable& exe, const Binding* bound) {
  json j = package_json(exe, bound);
  std::ostringstream s;
  s << "package " << j["name"].get<std::string>() << " (format " << j["format_version"]
    << ", fuserc " << j["fuserc_version"].get<std::string>() << ", NVRTC "
    << j["nvrtc_version"].get<std::string>() << "), " << j["size_bytes"] << " bytes, verified\n";
  s << "  archs:";
  for (const auto& a : j["archs"]) s << " " << a.get<std::string>();
  s << "\n  symbols:";
  for (const auto& sym : j["symbols"])
    s << " " << sym["name"].get<std::string>() << " in [" << sym["min"] << ", " << sym["max"]
      << "] (hint " << sym["hint"] << ")";
  auto tensors = [&](const char* key) {
    s << "\n  " << key << ":";
    for (const auto& t : j[key]) {
      s << " " << t["name"].get<std::string>() << " " << t["dtype"].get<std::string>() << "[";
      for (size_t i = 0; i < t["shape"].size(); ++i)
        s << (i ? ", " : "") << t["shape"][i].get<std::string>();
      s << "]";
      if (t.contains("sets_symbol")) s << " (sets " << t["sets_symbol"].get<std::string>() << ")";
      if (t.contains("in_place_of")) {
        std::string in = t["in_place_of"].get<std::string>();
        s << (in == t["name"].get<std::string>() ? " (updated in place)" : " (into " + in + ")");
      }
    }
  };
  tensors("inputs");
  tensors("outputs");
  if (!j["constants"].empty()) {
    s << "\n  constants (the package's; never passed):";
    for (const auto& c : j["constants"]) {
      s << "\n    " << c["name"].get<std::string>() << " " << c["dtype"].get<std::string>()
        << c["shape"].dump() << ", " << c["bytes"] << " bytes, hash "
        << c["hash"].get<std::string>() << ", " << c["stored"].get<std::string>();
    }
  }
  if (!j["binding"].empty()) {
    s << "\n  binding:";
    for (const auto& b : j["binding"]) {
      std::string from = b["from"].get<std::string>();
      s << " " << b["symbol"].get<std::string>() << " = ";
      if (from == "scalar")
        s << "the value of " << b["input"].get<std::string>();
      else if (from == "solve")
        s << "solved from " << b["input"].get<std::string>() << "[" << b["dim"] << "] = "
          << b["extent"].get<std::string>();
      else
        s << b["input"].get<std::string>() << "[" << b["dim"] << "]";
      s << ";";
    }
  }
  s << "\n  buffers:\n";
  for (const auto& b : j["buffers"]) {
    s << "    " << b["name"].get<std::string>() << ": " << b["kind"].get<std::string>() << ", "
      << b["bytes"].get<std::string>() << " bytes";
    if (b.contains("offset")) s << " at workspace offset " << b["offset"].get<std::string>();
    if (b.contains("in_place_of")) s << ", in place of " << b["in_place_of"].get<std::string>();
    s << "\n";
  }
  s << "  workspace: " << j["workspace"].get<std::string>() << " bytes\n";
  const size_t variants = j["kernels"].size();
  s << "  plan: "
    << steps_per_run(j["kernels_per_run"].get<int64_t>(), j["library_steps_per_run"].get<int64_t>())
    << " (" << variants
    << " compiled variant" << (variants == 1 ? "" : "s") << ", chosen at launch by size)\n";
  for (size_t i = 0; i < j["plan"].size(); ++i) {
    const auto& l = j["plan"][i];
    s << "    " << i << ":";
    if (l.contains("library")) s << " library step " << l["library"].get<std::string>() << ";";
    for (const auto& v : l["variants"]) {
      std::string reason = v["reason"].get<std::string>();
      s << " " << v["kernel"].get<std::string>()
        << (v["when"].get<std::string>() == "1" ? "" : " if " + v["when"].get<std::string>())
        << (reason.empty() || reason == "always" ? "" : " (" + reason + ")") << ";";
    }
    s << " reads";
    for (const auto& r : l["reads"]) s << " " << r.get<std::string>();
    s << ", writes";
    for (const auto& w : l["writes"]) s << " " << w.get<std::string>();
    s << "\n";
  }
  for (const auto& k : j["kernels"]) {
    s << "  kernel " << k["name"].get<std::string>() << " (" << k["scheduler"].get<std::string>();
    for (const auto& [key, value] : k["params"].items())
      s << ", " << key << " " << value.get<std::string>();
    s << ")\n    computes: " << k["comment"].get<std::string>() << "\n";
    if (!k["variant_note"].get<std::string>().empty())
      s << "    configuration: " << k["variant_note"].get<std::string>() << "\n";
    s << "    grid [";
    for (size_t i = 0; i < 3; ++i) s << (i ? ", " : "") << k["grid"][i].get<std::string>();
    s << "], block [";
    for (size_t i = 0; i < 3; ++i) s << (i ? ", " : "") << k["block"][i].get<std::string>();
    s << "], dynamic shared " << k["dynamic_shared_bytes"].get<std::string>() << " bytes\n";
    for (const auto& [name, v] : k["launch_values"].items())
      s << "    " << name << " = " << v.get<std::string>() << "\n";
    s << "    args:";
    for (const auto& a : k["args"]) {
      s << " " << a["name"].get<std::string>() << " (" << a["role"].get<std::string>();
      if (a.contains("size")) s << " " << a["size"].get<std::string>();
      s << ")";
    }
    s << "\n";
    for (const auto& a : k["args"]) {
      if (!a.contains("allocation")) continue;
      const auto& al = k["allocations"][a["allocation"].get<size_t>()];
      s << "    scratch " << a["name"].get<std::string>() << ": " << al["bytes"].get<std::string>()
        << " bytes per launch" << (al["zero_init"].get<bool>() ? ", zeroed (left zeroed)" : "")
        << "\n";
    }
    for (const auto& a : k["archs"]) {
      std::string arch = a.get<std::string>();
      s << "    " << arch << ": " << k["registers"][arch] << " registers, "
        << k["spill_bytes"][arch] << " spill bytes, " << k["shared_bytes"][arch]
        << " shared bytes\n";
    }
    for (const auto& g : k["guards"])
      s << "    guard: " << g["holds_when"].get<std::string>()
        << " (else: " << g["message"].get<std::string>() << ")\n";
  }
  for (const auto& mm : j["library_steps"]) {
    s << "  library step " << mm["name"].get<std::string>() << " (matrix product, "
      << mm["a"]["dtype"].get<std::string>() << ")\n    computes: "
      << mm["comment"].get<std::string>() << "\n    C[" << mm["m"].get<std::string>() << ", "
      << mm["n"].get<std::string>() << "] = A[" << mm["m"].get<std::string>() << ", "
      << mm["k"].get<std::string>() << "] x B[" << mm["k"].get<std::string>() << ", "
      << mm["n"].get<std::string>() << "], batch " << mm["batch"].get<std::string>()
      << ", outer " << mm["outer"].get<std::string>() << ", epilogue "
      << mm["epilogue"].get<std::string>() << (mm["allow_tf32"].get<bool>() ? ", TF32" : "")
      << "\n";
    for (const char* key : {"a", "b", "c", "bias"}) {
      if (!mm.contains(key)) continue;
      const auto& o = mm[key];
      s << "    " << key << ": " << o["buffer"].get<std::string>() << " (" << o["dtype"].get<std::string>()
        << "), row stride " << o["row_stride"].get<std::string>() << ", column stride "
        << o["col_stride"].get<std::string>() << ", batch stride "
        << o["batch_stride"].get<std::string>() << ", outer stride "
        << o["outer_stride"].get<std::string>();
      if (o["offset"].get<std::string>() != "0")
        s << ", from element " << o["offset"].get<std::string>();
      s << "\n";
    }
    s << "    workspace: " << mm["workspace"].get<std::string>() << " bytes\n";
  }
  if (j.contains("bound")) {
    const auto& b = j["bound"];
    s << "  bound to";
    for (const auto& [name, v] : b["symbols"].items()) s << " " << name << "=" << v;
    s << ", device sm_count=" << b["device"]["sm_count"] << ":\n";
    for (size_t i = 0; i < b["launches"].size(); ++i) {
      const auto& l = b["launches"][i];
      if (l.contains("library")) {
        s << "    launch " << i << ": library step " << l["library"].get<std::string>() << "\n"
          << "      m " << l["m"] << ", n " << l["n"] << ", k " << l["k"] << ", batch "
          << l["batch"] << ", outer " << l["outer"] << ", reads and writes " << l["global_bytes"]
          << " bytes\n";
        continue;
      }
      std::string reason = l["reason"].get<std::string>();
      s << "    launch " << i << ": " << l["kernel"].get<std::string>()
        << (reason.empty() ? "" : "  (" + reason + ")") << "\n";
      if (!l["note"].get<std::string>().empty())
        s << "      " << l["note"].get<std::string>() << "\n";
      s << "      grid " << l["grid"].dump() << ", block " << l["block"].dump()
        << ", dynamic shared " << l["dynamic_shared_bytes"] << " bytes, reads and writes "
        << l["global_bytes"] << " bytes";
      const char* sep = "; ";
      for (const auto& [name, v] : l["values"].items()) {
        s << sep << name << " " << v;
        sep = ", ";
      }
      s << "\n";
    }
    for (const auto& [name, v] : b["buffer_bytes"].items())
      s << "    buffer " << name << ": " << v << " bytes\n";
    s << "    workspace: " << b["workspace_bytes"] << " bytes\n";
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3f", b["traffic_ratio"].get<double>());
    s << "    global_bytes: " << b["global_bytes"]
      << " (every buffer each kernel reads or writes, once per kernel)\n"
      << "    min_global_bytes: " << b["min_global_bytes"]
      << " (the inputs read once, the outputs written once)\n"
      << "    traffic ratio: " << ratio << "\n";
  }
  return s.str();
}

}  // namespace fuserc
