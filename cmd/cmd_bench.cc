// `fuserc bench GRAPH.json [--json]`: where the time goes, in one process, medians of
// repeated runs: the front end (parse to CUDA text), NVRTC, writing the package, loading it to
// a ready Executable, and binding a new shape. Also the targets they are held to, and each
// library step's product in the CPU executor the emulator uses (cmd/bench_library.h), and with
// --emulate-runs the whole plan in the emulator (cmd/bench_emulated.h), and with --cache-url
// what a remote compile cache saves (cmd/bench_remote_cache.h).
// `fuserc bench PACKAGE.fpkg --gpu [--bind ...]`: the package's kernels timed on a GPU
// (cmd/bench_gpu.h); without --gpu, what loading it costs (cmd/bench_load.h).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cmd/bench_emulated.h"
#include "cmd/bench_gpu.h"
#include "cmd/bench_library.h"
#include "cmd/bench_load.h"
#include "cmd/bench_remote_cache.h"
#include "cmd/bench_timing.h"
#include "cmd/commands.h"
#include "cmd/pipeline_options.h"
#include "cmd/symbol_bindings.h"
#include "codegen/compile_fusion.h"
#include "codegen/nvrtc/nvrtc_compiler.h"
#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "core/base/text_util.h"
#include "core/frontend/graph_parser.h"
#include "runtime/executable.h"
#include "serde/package_writer.h"

namespace fuserc::cmd {
namespace {

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("bench",
                         "Measure the compile and load path on a graph: front end, NVRTC, package "
                         "writing, loading, binding a new shape (medians over repeated runs); "
                         "on a package, loading it (and its constants' first use); with --gpu, "
                         "a package's kernels on a GPU.");
  struct Options {
    std::string graph, archs = "sm_80,sm_90";
    int runs = 0;  // 0: the mode's default
    int nvrtc_runs = 3;
    bool json = false;
    bool gpu = false;
    std::string bind, inputs;
    int warmup = 10;
    int library_runs = 3;
    int emulate_runs = 0;
    int device = 0;
    CacheFlags cache;
    bool frontend_only = false;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("GRAPH", o->graph,
                  "the fusion graph (JSON), or a package (.fpkg: loading it; with --gpu, its "
                  "kernels)")
      ->required();
  sub->add_flag("--gpu", o->gpu,
                "time a package (GRAPH is a .fpkg) on a GPU: each kernel and the whole plan "
                "(CUDA events, median), as a CUDA graph, bandwidth, host cost of a launch");
  sub->add_option("--bind", o->bind,
                  "symbol values, e.g. N=4096,H=1024 (else hints): --gpu's binding; on a graph, "
                  "the sizes its library steps are timed at");
  sub->add_option("--library-runs", o->library_runs,
                  "on a graph: runs of each library step's product in the CPU executor "
                  "(default 3; 0: none)");
  sub->add_option("--emulate-runs", o->emulate_runs,
                  "on a graph: runs of the whole plan in the emulator (kernels on the host's "
                  "cores, products in the CPU executor) at --bind's sizes, random inputs; the "
                  "first, which host-compiles kernels not cached, is reported apart (default 0: "
                  "none)");
  sub->add_option("--inputs", o->inputs,
                  "--gpu: a safetensors file with the inputs (else a fixed pattern)");
  sub->add_option("--warmup", o->warmup, "--gpu: launches before timing (default 10)");
  sub->add_option("--device", o->device, "--gpu: the CUDA device (default 0)");
  sub->add_option("--arch", o->archs, "architectures, as for compile (default: sm_80,sm_90)");
  sub->add_option("--runs", o->runs,
                  "repetitions of the fast stages (default 200; --gpu: timed runs, default 100)");
  sub->add_option("--nvrtc-runs", o->nvrtc_runs, "repetitions of NVRTC (default 3)");
  add_remote_cache_flags(*sub, o->cache);
  sub->add_flag("--json", o->json,
                "print JSON: frontend_us, nvrtc_us, write_us, load_us, bind_us and more");
  sub->add_flag("--frontend-only", o->frontend_only,
                "time the front end alone (parse to CUDA), with the time of each stage of its "
                "last run; for large graphs (bench/frontend_scale.py)");
  sub->footer(
      "Targets: loading is at least 100x faster than the front end and 10,000x faster than the\n"
      "front end plus NVRTC; binding a new shape costs under 5 us per kernel; the package is at\n"
      "most 10% larger than the cubins, PTX and sources it carries.");
  sub->callback([o] {
    if (o->gpu) {
      GpuBenchOptions g;
      g.package = o->graph;
      g.bind = parse_bindings(o->bind);
      g.inputs = o->inputs;
      g.runs = o->runs ? o->runs : 100;
      g.warmup = o->warmup;
      g.device = o->device;
      g.json = o->json;
      run_gpu_bench(g);
      return;
    }
    if (!o->inputs.empty()) throw UsageError("--inputs goes with --gpu");
    const bool package =
        o->graph.size() > 5 && o->graph.compare(o->graph.size() - 5, 5, ".fpkg") == 0;
    if (package && !o->bind.empty()) throw UsageError("--bind goes with --gpu or a graph");
    if (o->library_runs < 0) throw UsageError("--library-runs must be >= 0");
    if (o->emulate_runs < 0) throw UsageError("--emulate-runs must be >= 0");
    if (package && o->emulate_runs > 0) throw UsageError("--emulate-runs goes with a graph");
    if (package) {
      LoadBenchOptions l;
      l.package = o->graph;
      l.runs = o->runs ? o->runs : 200;
      l.json = o->json;
      run_load_bench(l);
      return;
    }
    if (o->runs == 0) o->runs = 200;
    if (o->runs < 1 || o->nvrtc_runs < 1) throw UsageError("--runs and --nvrtc-runs must be >= 1");
    CompileOptions copts;
    copts.archs = parse_archs(o->archs);
    copts.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    copts.run_nvrtc = false;

    // Front end: parse to CUDA text.
    PassContext stages;
    size_t frontend_kernels = 0;
    double frontend = median_us(o->runs, [&] {
      PassContext ctx;
      Fusion f = ctx.timed("parse", [&] { return parse_fusion_file(o->graph); });
      CompiledFusion c = compile_fusion(std::move(f), copts, ctx);
      frontend_kernels = c.kernels.size();
      stages = ctx;
    });
    if (o->frontend_only) {
      nlohmann::json j = {{"graph", o->graph},
                          {"kernels", frontend_kernels},
                          {"frontend_us", frontend},
                          {"stages_us", nlohmann::json::object()}};
      for (const auto& [stage, us] : stages.timings()) j["stages_us"][stage] = us;
      if (o->json) {
        std::cout << j.dump(2) << "\n";
        return;
      }
      std::cout << "fuserc bench " << o->graph << " (" << frontend_kernels
                << " kernels, front end only, median of " << o->runs << " runs)\n"
                << "  front end (parse to CUDA): " << frontend << " us; its last run:\n"
                << stages.timing_table();
      return;
    }
    PassContext ctx;
    CompiledFusion c = compile_fusion(parse_fusion_file(o->graph), copts, ctx);

    // NVRTC, every kernel for every architecture.
    std::vector<KernelSummary*> ks;
    for (auto& k : c.kernels) ks.push_back(&k);
    NvrtcOptions nopts;
    nopts.archs = copts.archs;
    nopts.jobs = copts.jobs;
    double nvrtc = median_us(o->nvrtc_runs, [&] { compile_kernels(ks, nopts); });
    nlohmann::json remote;
    if (!o->cache.url.empty()) remote = bench_remote_cache(ks, nopts, o->cache, o->nvrtc_runs);

    // Writing.
    std::filesystem::path dir = std::filesystem::temp_directory_path();
    std::string path = (dir / ("fuserc_bench_" + std::to_string(::getpid()) + ".fpkg")).string();
    PackageOptions popts;
    double write = median_us(o->runs, [&] { write_package(path, c, popts); });

    // Loading to a ready Executable: from the file, and from bytes already in memory (a
    // package embedded in a program, or kept mapped).
    double load = median_us(o->runs, [&] { auto exe = Executable::load(path); });
    std::string bytes = read_file(path);
    double load_memory = median_us(o->runs, [&] {
      Executable exe(PackageView::view_bytes(reinterpret_cast<const uint8_t*>(bytes.data()),
                                             bytes.size(), path));
    });

    // Binding a new shape (a cache miss each time).
    auto exe = Executable::load(path);
    double bind = bind_new_shape_us(*exe, o->runs);
    // The library steps' products in the CPU executor, at the sizes asked for.
    nlohmann::json library = nlohmann::json::array();
    if (o->library_runs > 0 && !c.matmuls.empty())
      library = bench_library_steps(*exe, symbols_or_hints(*exe, parse_bindings(o->bind)),
                                    o->library_runs);
    nlohmann::json emulated;
    if (o->emulate_runs > 0)
      emulated = bench_emulated_plan(*exe, parse_fusion_file(o->graph), parse_bindings(o->bind),
                                     o->emulate_runs);
    size_t package_bytes = std::filesystem::file_size(path);
    size_t payload = 0;
    for (const auto& k : c.kernels) {
      payload += k.source.size() + k.ptx.size();
      for (const auto& b : k.binaries) payload += b.cubin.size();
    }
    std::filesystem::remove(path);

    size_t kernels = c.kernels.size();
    double bind_per_kernel = kernels ? bind / static_cast<double>(kernels) : bind;
    double overhead = payload ? static_cast<double>(package_bytes) / payload - 1.0 : 0.0;
    nlohmann::json j = {
        {"graph", c.fusion.name},
        {"kernels", kernels},
        {"frontend_us", frontend},
        {"nvrtc_us", nvrtc},
        {"write_us", write},
        {"load_us", load},
        {"load_memory_us", load_memory},
        {"bind_us", bind},
        {"bind_us_per_kernel", bind_per_kernel},
        {"package_bytes", package_bytes},
        {"payload_bytes", payload},
        {"package_overhead", overhead},
        {"library_steps", library},
        {"emulated_plan", emulated},
        {"remote_cache", remote},
        {"frontend_over_load", frontend / load},
        {"frontend_nvrtc_over_load", (frontend + nvrtc) / load},
        {"frontend_over_load_memory", frontend / load_memory},
        {"targets_met", frontend / load >= 100 && (frontend + nvrtc) / load >= 10000 &&
                            bind_per_kernel < 5 && overhead <= 0.10}};
    if (o->json) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    auto line = [](const char* what, double us) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "  %-26s %12.1f us\n", what, us);
      std::cout << buf;
    };
    std::cout << "fuserc bench " << c.fusion.name << " ("
              << steps_per_run(static_cast<int64_t>(c.plan.size() - c.matmuls.size()),
                               static_cast<int64_t>(c.matmuls.size()))
              << ", medians)\n";
    line("front end (parse to CUDA)", frontend);
    line("NVRTC (all archs)", nvrtc);
    if (!remote.is_null()) {
      char rbuf[512];
      std::snprintf(rbuf, sizeof rbuf,
                    "  remote cache %s: filling it %.1f ms (%llu compiled, %llu stored); an "
                    "empty local cache from it %.1f ms (%llu entries, %llu bytes, %llu "
                    "compiled)\n",
                    remote["url"].get<std::string>().c_str(), remote["fill_us"].get<double>() / 1e3,
                    static_cast<unsigned long long>(remote["fill_compiled"]),
                    static_cast<unsigned long long>(remote["fill_stored"]),
                    remote["fetch_us"].get<double>() / 1e3,
                    static_cast<unsigned long long>(remote["fetched"]),
                    static_cast<unsigned long long>(remote["bytes"]),
                    static_cast<unsigned long long>(remote["fetch_compiled"]));
      std::cout << rbuf;
    }
    line("write package", write);
    line("load package (file)", load);
    line("load package (in memory)", load_memory);
    line("bind a new shape", bind);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "  load vs front end: %.0fx from the file, %.0fx in memory (target 100x)\n"
                  "  load vs front end + NVRTC: %.0fx (target 10000x)\n"
                  "  bind per kernel: %.2f us (target < 5 us)\n  package: %zu bytes, "
                  "%.1f%% over its cubins, PTX and sources (target <= 10%%)\n",
                  frontend / load, frontend / load_memory, (frontend + nvrtc) / load,
                  bind_per_kernel, package_bytes, 100.0 * overhead);
    std::cout << buf << "  targets " << (j["targets_met"].get<bool>() ? "met" : "NOT met") << "\n";
    for (const auto& s : library) {
      std::snprintf(buf, sizeof buf,
                    "  library step %s (CPU executor, %d threads): %s [%lld x %lld] x [%lld x %lld]"
                    ", batch %lld x %lld: %.2f ms, %.1f GFLOP/s\n",
                    s["name"].get<std::string>().c_str(), s["threads"].get<int>(),
                    s["dtype"].get<std::string>().c_str(), static_cast<long long>(s["m"]),
                    static_cast<long long>(s["k"]), static_cast<long long>(s["k"]),
                    static_cast<long long>(s["n"]), static_cast<long long>(s["batch"]),
                    static_cast<long long>(s["outer"]), s["us"].get<double>() / 1e3,
                    s["gflops"].get<double>());
      std::cout << buf;
    }
    if (!emulated.is_null()) {
      std::string sizes;
      for (const auto& [name, value] : emulated["symbols"].items())
        sizes += (sizes.empty() ? "" : ",") + name + "=" + std::to_string(value.get<int64_t>());
      const auto plan_kernels = static_cast<long long>(emulated["kernels"]);
      const auto plan_steps = static_cast<long long>(emulated["library_steps"]);
      const double first = emulated["first_us"].get<double>() / 1e3;
      if (o->emulate_runs == 1)
        std::snprintf(buf, sizeof buf,
                      "  emulated plan (%lld kernels, %lld library steps, %s): %.1f ms, one run "
                      "(host compiles included)\n",
                      plan_kernels, plan_steps, sizes.c_str(), first);
      else
        std::snprintf(buf, sizeof buf,
                      "  emulated plan (%lld kernels, %lld library steps, %s): %.1f ms median of "
                      "%d runs after the first; the first %.1f ms (host compiles)\n",
                      plan_kernels, plan_steps, sizes.c_str(),
                      emulated["median_us"].get<double>() / 1e3,
                      o->emulate_runs - 1, first);
      std::cout << buf;
    }
  });
}

}  // namespace fuserc::cmd
