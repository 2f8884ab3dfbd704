// Writes small packages for the package fuzz targets' seed corpus (fuzz/seeds/package): each
// graph given is compiled without NVRTC (the package then holds the CUDA source only, a few
// KB, instead of cubins and PTX), so that the fuzzer mutates mostly the structure.
//   make_fuzz_seeds OUT_DIR GRAPH.json...
#include <cstdio>
#include <filesystem>
#include <string>

#include "codegen/compile_fusion.h"
#include "core/base/diagnostics.h"
#include "core/frontend/graph_parser.h"
#include "serde/package_writer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: make_fuzz_seeds OUT_DIR GRAPH.json...\n");
    return 2;
  }
  try {
    for (int i = 2; i < argc; ++i) {
      fuserc::PassContext ctx;
      fuserc::CompileOptions options;
      options.run_nvrtc = false;
      options.jobs = 1;
      fuserc::CompiledFusion c =
          fuserc::compile_fusion(fuserc::parse_fusion_file(argv[i]), options, ctx);
      std::string out = (std::filesystem::path(argv[1]) /
                         std::filesystem::path(argv[i]).stem()).string() + ".fpkg";
      fuserc::write_package(out, c, {});
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_fuzz_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
