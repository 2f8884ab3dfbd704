// `fuserc compile GRAPH.json -o OUT.fpkg`: the main job.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "cmd/commands.h"
#include "cmd/depfile.h"
#include "cmd/pipeline_options.h"
#include "cmd/progress_line.h"
#include "codegen/compile_fusion.h"
#include "codegen/nvrtc/nvrtc_toolchain.h"
#include "core/base/file_io.h"
#include "core/base/text_util.h"
#include "core/frontend/graph_parser.h"
#include "serde/package_writer.h"

namespace fuserc::cmd {

void add_compile_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("compile",
                         "Compile a fusion graph into a package: segment it into kernels, generate "
                         "CUDA C++, compile it with NVRTC for each architecture, pack everything.");
  struct Options {
    std::string graph, out, archs = "sm_80,sm_90", depfile;
    int jobs = 0;
    uint64_t external_min = CompiledFusion::kDefaultExternalConstantBytes;
    bool quiet = false;
    PipelineFlags pipeline;
    CacheFlags cache;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("GRAPH", o->graph, "the fusion graph (JSON)")->required();
  sub->add_option("-o,--output", o->out, "the package to write (.fpkg)")->required();
  sub->add_option("--arch", o->archs,
                  "comma-separated GPU architectures to build cubins for (sm_75 and up); the PTX "
                  "of the lowest is included too (default: sm_80,sm_90)");
  sub->add_option("-j,--jobs", o->jobs, "parallel NVRTC compilations (default: one per core)");
  sub->add_option("--depfile", o->depfile,
                  "also write the package's dependencies (the graph, and the weights files its "
                  "constants are read from) to this file in Make syntax, for Ninja and Make");
  sub->add_option("--external-data-min", o->external_min,
                  "constants of at least this many bytes are stored after the package's "
                  "FlatBuffer, aligned for mapping, and read only when a bind needs them "
                  "(default 65536; smaller ones are blobs inside it)");
  sub->add_flag("-q,--quiet", o->quiet,
               "print nothing on success but warnings, and no progress line");
  add_cache_flags(*sub, o->cache, true);
  add_pipeline_flags(*sub, o->pipeline);
  sub->footer(
      "The package holds, per kernel, the CUDA source, the PTX, a cubin per architecture with\n"
      "ptxas' register and spill counts, and every size the runtime needs as an expression over\n"
      "the graph's symbols; `fuserc inspect` shows it. Identical input and options give\n"
      "identical bytes, whatever the folder, the time, -j or the cache. Nothing is written\n"
      "unless compilation succeeds. NVRTC results are kept in a cache shared by every fuserc\n"
      "process (see `fuserc cache --help`); on a terminal a line shows NVRTC's progress.\n"
      "Limits: graph file 64 MiB, JSON nesting 64, 1,000,000 ops, 100,000 inputs, 10,000\n"
      "symbols, rank 32, names of 128 characters, extents below 2^62. The package is written\n"
      "to an unnamed temporary file renamed over OUT when whole: a full disk, a failed NVRTC\n"
      "or a killed compile leaves the previous OUT as it was and no other file.");
  sub->callback([o] {
    std::unique_ptr<DiskCache> cache = open_compile_cache(o->cache);
    nvrtc_toolchain(cache.get());  // from the cache when NVRTC is unchanged: no need to load it
    CompileOptions copts;
    copts.combo_kernels = !o->pipeline.no_combo_kernels;
    copts.archs = parse_archs(o->archs);
    copts.jobs = o->jobs > 0 ? o->jobs : std::max(1u, std::thread::hardware_concurrency());
    std::filesystem::path out(o->out);
    copts.failure_dir = out.has_parent_path() ? out.parent_path().string() : ".";
    copts.cache = cache.get();
    copts.external_constant_bytes = o->external_min;
    std::optional<ProgressLine> progress(std::in_place, !o->quiet);
    copts.progress = [&progress](size_t done, size_t total) { progress->update(done, total); };
    copts.waiting = [&progress] { progress->tick(); };
    PassContext ctx = make_pass_context(o->pipeline);
    Fusion f = ctx.timed("parse", [&] { return parse_fusion_file(o->graph); });
    // The graph and the weights files its constants come from (folding may drop some later;
    // the package still depends on them).
    std::vector<std::string> deps = {o->graph};
    for (const Value& v : f.values)
      if (v.is_constant() && !v.constant->file().empty() &&
          std::find(deps.begin(), deps.end(), v.constant->file()) == deps.end())
        deps.push_back(v.constant->file());
    ctx.dump("parse", [&] { return f.to_text(); });
    CompiledFusion c = compile_fusion(std::move(f), copts, ctx);
    progress.reset();  // the line is erased before anything else is printed
    PackageOptions popts;
    popts.options = {"--arch=" + o->archs};
    // Like a compiler's object files, the package (and the depfile) replace the old ones
    // atomically but are not forced to disk (fsync): after a crash the build runs again, and a
    // package damaged by one is refused when loaded (its checksums). Forcing them cost more
    // than the rest of a warm-cache compile.
    ctx.timed("write", [&] { write_package(o->out, c, popts, /*durable=*/false); });
    if (!o->depfile.empty()) write_file_replacing(o->depfile, make_depfile(o->out, deps));
    if (cache) {
      cache->flush();
      if (!o->quiet && !cache->store_problem().empty())
        std::cerr << "fuserc: warning: the compile cache was not updated: "
                  << cache->store_problem() << "\n";
    }
    if (o->pipeline.time_passes) std::cerr << ctx.timing_table();
    if (!o->quiet) {
      std::vector<std::string> archs;
      for (int a : c.archs) archs.push_back("sm_" + std::to_string(a));
      std::cout << "fuserc: wrote " << o->out << ": "
                << steps_per_run(static_cast<int64_t>(c.plan.size() - c.matmuls.size()),
                                 static_cast<int64_t>(c.matmuls.size()))
                << ", "
                << count_of(c.kernels.size(), "compiled variant", "compiled variants") << " ("
                << join(archs) << " + PTX)\n";
    }
  });
}

}  // namespace fuserc::cmd
