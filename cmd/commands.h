// Owns the list of fuserc's subcommands: each one registers itself on the CLI11 app with its
// options, help text and the function that runs it. Errors are thrown (UserError, UsageError,
// InternalError) and turned into messages and exit statuses by main.cc alone.
#pragma once

#include <CLI/CLI.hpp>

namespace fuserc::cmd {

void add_bench_command(CLI::App& app);
void add_cache_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_codegen_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_dot_command(CLI::App& app);
void add_dump_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_inputs_command(CLI::App& app);

}  // namespace fuserc::cmd
