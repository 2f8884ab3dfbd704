// `fuserc inspect PKG [--json] [--bind N=4096]`: what a package holds.
#include <iostream>

#include "cmd/commands.h"
#include "cmd/symbol_bindings.h"
#include "core/base/diagnostics.h"
#include "runtime/executable.h"
#include "runtime/package_report.h"

namespace fuserc::cmd {

void add_inspect_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "inspect",
      "Describe a package: kernels, schedulers, architectures, registers and spills, "
      "buffers, the run plan; every size as a formula over the symbols.");
  struct Options {
    std::string package, bind;
    bool json = false;
    int64_t sm_count = kDefaultSmCount;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("PACKAGE", o->package, "a package written by fuserc compile")->required();
  sub->add_flag("--json", o->json, "print JSON (for scripts)");
  sub->add_option("--bind", o->bind,
                  "symbol values, e.g. N=4096,H=1024 (or 'hints': the package's hints): also "
                  "print the launch dimensions, buffer sizes and global-memory traffic "
                  "(global_bytes, min_global_bytes) they give; a package without symbols "
                  "shows them always");
  sub->add_option("--sm-count", o->sm_count,
                  "with --bind: the number of SMs of the GPU to bind for (default 132, an H100 "
                  "SXM); launch configurations follow it, memory sizes do not")
      ->check(CLI::Range(int64_t{1}, kMaxSmCount));
  sub->footer(
      "Every byte of the package is verified first (structure, checksums, the hash of "
      "each cubin, PTX and source).");
  sub->callback([o] {
    auto exe = Executable::load(o->package);
    exe->package().verify_all();
    std::shared_ptr<const Binding> bound;
    // A package without symbols has one binding: its launches are shown unless it cannot be
    // bound (a guard no size passes), which inspect reports beside the package, not instead.
    std::string unbound;
    if (o->bind.empty() && exe->metadata().symbols()->size() == 0) {
      try {
        bound = exe->bind({});
      } catch (const UserError& e) {
        unbound = e.what();
      }
    } else if (o->bind == "hints") {
      std::vector<int64_t> values;
      for (const auto* s : *exe->metadata().symbols()) values.push_back(s->hint());
      bound = exe->bind(values);
    } else if (!o->bind.empty()) {
      auto given = parse_bindings(o->bind);
      std::vector<int64_t> values;
      const auto& m = exe->metadata();
      for (const auto* s : *m.symbols()) {
        auto it = given.find(s->name()->str());
        if (it == given.end()) throw UsageError("--bind: no value for symbol " + s->name()->str());
        values.push_back(it->second);
        given.erase(it);
      }
      if (!given.empty())
        throw UsageError("--bind: the package has no symbol " + given.begin()->first);
      DeviceProps device;
      device.sm_count = o->sm_count;
      bound = exe->bind(values, device);
    }
    if (o->json) {
      auto j = package_json(*exe, bound.get());
      if (!unbound.empty()) j["unbound"] = unbound;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << package_text(*exe, bound.get());
      if (!unbound.empty()) std::cout << "not bound: " << unbound << "\n";
    }
  });
}

}  // namespace fuserc::cmd
