// `fuserc compile GRAPH.json -o OUT.fpkg`: the main job.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "cmd/commands.h"
#include "cmd/pipeline_options.h"
#include "codegen/compile_fusion.h"
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
    std::string graph, out, archs = "sm_80,sm_90";
    int jobs = 0;
    bool quiet = false;
    PipelineFlags pipeline;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("GRAPH", o->graph, "the fusion graph (JSON)")->required();
  sub->add_option("-o,--output", o->out, "the package to write (.fpkg)")->required();
  sub->add_option("--arch", o->archs,
                  "comma-separated GPU architectures to build cubins for (sm_75 and up); the PTX "
                  "of the lowest is included too (default: sm_80,sm_90)");
  sub->add_option("-j,--jobs", o->jobs, "parallel NVRTC compilations (default: one per core)");
  sub->add_flag("-q,--quiet", o->quiet, "print nothing on success");
  add_pipeline_flags(*sub, o->pipeline);
  sub->footer(
      "The package holds, per kernel, the CUDA source, the PTX, a cubin per architecture with\n"
      "ptxas' register and spill counts, and every size the runtime needs as an expression over\n"
      "the graph's symbols; `fuserc inspect` shows it. Identical input and options give\n"
      "identical bytes. Nothing is written unless compilation succeeds.");
  sub->callback([o] {
    CompileOptions copts;
    copts.archs = parse_archs(o->archs);
    copts.jobs = o->jobs > 0 ? o->jobs : std::max(1u, std::thread::hardware_concurrency());
    std::filesystem::path out(o->out);
    copts.failure_dir = out.has_parent_path() ? out.parent_path().string() : ".";
    PassContext ctx = make_pass_context(o->pipeline);
    Fusion f = ctx.timed("parse", [&] { return parse_fusion_file(o->graph); });
    ctx.dump("parse", [&] { return f.to_text(); });
    CompiledFusion c = compile_fusion(std::move(f), copts, ctx);
    PackageOptions popts;
    popts.options = {"--arch=" + o->archs};
    ctx.timed("write", [&] { write_package(o->out, c, popts); });
    if (o->pipeline.time_passes) std::cerr << ctx.timing_table();
    if (!o->quiet) {
      std::vector<std::string> archs;
      for (int a : c.archs) archs.push_back("sm_" + std::to_string(a));
      std::cout << "fuserc: wrote " << o->out << ": "
                << count_of(c.plan.size(), "kernel", "kernels") << " per run, "
                << count_of(c.kernels.size(), "compiled variant", "compiled variants") << " ("
                << join(archs) << " + PTX)\n";
    }
  });
}

}  // namespace fuserc::cmd
