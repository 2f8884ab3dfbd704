// The fuserc executable: builds the command line from the subcommands in commands.h and maps
// every failure to one line on stderr and an exit status:
//   0 success, 1 bad input (a user error), 2 bad command line, 3 internal error (a bug).
#include <cstdio>
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>

#include "cmd/commands.h"
#include "core/base/diagnostics.h"
#include "fuserc/version.h"

namespace {

constexpr int kExitUserError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 3;

int report(const char* kind, const std::string& message, int status) {
  std::cerr << "fuserc: " << kind << ": " << message << "\n";
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "fuserc " FUSERC_VERSION_STRING
      " - an ahead-of-time kernel compiler for NVIDIA GPUs.\n"
      "Reads a tensor fusion graph (JSON), splits it into kernels, writes them as CUDA C++,\n"
      "compiles them with NVRTC and packs everything a program needs into one package.",
      "fuserc"};
  app.set_version_flag("--version", "fuserc " FUSERC_VERSION_STRING);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  fuserc compile examples/bias_gelu.json -o bias_gelu.fpkg\n"
      "  fuserc inspect bias_gelu.fpkg --bind N=4096\n"
      "  fuserc inputs examples/bias_gelu.json -o in.safetensors --bind N=128\n"
      "  fuserc run bias_gelu.fpkg --inputs in.safetensors --outputs out.safetensors --emulate\n"
      "  fuserc eval examples/bias_gelu.json --inputs in.safetensors --outputs ref.safetensors\n"
      "Run 'fuserc COMMAND --help' for the options of a command.\n"
      "Exit status: 0 success, 1 bad input, 2 bad command line, 3 internal error (a bug).");
  fuserc::cmd::add_compile_command(app);
  fuserc::cmd::add_inspect_command(app);
  fuserc::cmd::add_run_command(app);
  fuserc::cmd::add_eval_command(app);
  fuserc::cmd::add_dump_command(app);
  fuserc::cmd::add_dot_command(app);
  fuserc::cmd::add_codegen_command(app);
  fuserc::cmd::add_bench_command(app);
  fuserc::cmd::add_check_command(app);
  fuserc::cmd::add_inputs_command(app);
  fuserc::cmd::add_cache_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::cout << "fuserc " FUSERC_VERSION_STRING "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::string what = e.what();
    return report("error", what + " (run 'fuserc --help' for usage)", kExitUsage);
  } catch (const fuserc::UsageError& e) {
    return report("error", e.what(), kExitUsage);
  } catch (const fuserc::UserError& e) {
    return report("error", e.what(), kExitUserError);
  } catch (const fuserc::InternalError& e) {
    return report("internal error",
                  std::string(e.what()) +
                      " (this is a bug in fuserc; please report it with the "
                      "command and the input that caused it)",
                  kExitInternal);
  } catch (const std::bad_alloc&) {
    return report("error", "out of memory", kExitUserError);
  } catch (const std::exception& e) {
    return report("internal error",
                  std::string("unexpected exception: ") + e.what() + " (this is a bug in fuserc)",
                  kExitInternal);
  }
  return 0;
}
