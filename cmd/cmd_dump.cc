// `fuserc dump PKG -d DIR`: the package's kernels as files, for reading and diffing.
#include <filesystem>
#include <iostream>

#include "cmd/commands.h"
#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "runtime/executable.h"

namespace fuserc::cmd {

void add_dump_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "dump",
      "Write a package's kernels as files: __tmp_<kernel>.cu (the CUDA source NVRTC "
      "compiled), __tmp_<kernel>.ptx and __tmp_<kernel>.sm_XX.cubin.");
  struct Options {
    std::string package, dir;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("PACKAGE", o->package, "a package written by fuserc compile")->required();
  sub->add_option("-d,--dir", o->dir, "the directory to write into (created if missing)")
      ->required();
  sub->callback([o] {
    auto exe = Executable::load(o->package);
    exe->package().verify_all();  // a damaged package writes nothing, not some of its files
    std::error_code ec;
    std::filesystem::create_directories(o->dir, ec);
    if (ec) throw UserError(SourcePlace{o->dir}, "cannot create directory: " + ec.message());
    const auto& m = exe->metadata();
    auto path = [&](const std::string& file) {
      return (std::filesystem::path(o->dir) / file).string();
    };
    for (const auto* k : *m.kernels()) {
      std::string name = k->name()->str();
      write_file_atomically(path("__tmp_" + name + ".cu"),
                            exe->package().blob(*k->source(), "source of kernel " + name));
      write_file_atomically(path("__tmp_" + name + ".ptx"),
                            exe->package().blob(*k->ptx(), "PTX of kernel " + name));
      for (const auto* b : *k->binaries()) {
        std::string arch = "sm_" + std::to_string(b->arch());
        write_file_atomically(path("__tmp_" + name + "." + arch + ".cubin"),
                              exe->package().blob(*b->cubin(), arch + " cubin of kernel " + name));
      }
    }
  });
}

}  // namespace fuserc::cmd
