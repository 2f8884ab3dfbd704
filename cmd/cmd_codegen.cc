// `fuserc codegen GRAPH.json -d DIR`: the generated CUDA, without compiling it.
#include <filesystem>

#include "cmd/commands.h"
#include "cmd/pipeline_options.h"
#include "codegen/compile_fusion.h"
#include "codegen/cuda/cuda_emitter.h"
#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "core/frontend/graph_parser.h"

namespace fuserc::cmd {

void add_codegen_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "codegen",
      "Write the CUDA C++ fuserc generates for a graph as __tmp_<kernel>.cu files, "
      "without compiling it (fast: for reading, diffing and golden tests).");
  struct Options {
    std::string graph, dir;
    bool kernel_only = false;
    PipelineFlags pipeline;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("GRAPH", o->graph, "the fusion graph (JSON)")->required();
  sub->add_option("-d,--dir", o->dir, "the directory to write into (created if missing)")
      ->required();
  sub->add_flag("--kernel-only", o->kernel_only,
                "leave the common preamble out of the kernel files and write it once, as "
                "__preamble.cuh");
  add_pipeline_flags(*sub, o->pipeline);
  sub->callback([o] {
    PassContext ctx = make_pass_context(o->pipeline);
    CompileOptions copts;
    copts.combo_kernels = !o->pipeline.no_combo_kernels;
    copts.run_nvrtc = false;
    CompiledFusion c = compile_fusion(parse_fusion_file(o->graph), copts, ctx);
    std::error_code ec;
    std::filesystem::create_directories(o->dir, ec);
    if (ec) throw UserError(SourcePlace{o->dir}, "cannot create directory: " + ec.message());
    auto path = [&](const std::string& f) { return (std::filesystem::path(o->dir) / f).string(); };
    const std::string& preamble = cuda::preamble();
    for (const auto& k : c.kernels) {
      std::string text = k.source;
      if (o->kernel_only) {
        FUSERC_CHECK(text.rfind(preamble, 0) == 0,
                     "kernel source does not start with the preamble");
        text = text.substr(preamble.size() + 1);
      }
      write_file_atomically(path("__tmp_" + k.name + ".cu"), text);
    }
    if (o->kernel_only) write_file_atomically(path("__preamble.cuh"), preamble);
    if (o->pipeline.time_passes) std::cerr << ctx.timing_table();
  });
}

}  // namespace fuserc::cmd
