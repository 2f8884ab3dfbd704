// `fuserc check GRAPH.json`: parse and validate a graph, print its typed form.
#include <iostream>

#include "cmd/commands.h"
#include "core/frontend/graph_parser.h"

namespace fuserc::cmd {

void add_check_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "check", "Parse and validate a fusion graph; print every value's dtype and shape.");
  auto graph = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  sub->add_option("GRAPH", *graph, "the fusion graph (JSON, see FUSION_FORMAT.md)")->required();
  sub->add_flag("-q,--quiet", *quiet, "print nothing; only the exit status tells");
  sub->footer(
      "Exit status 0 when the graph follows the contract; otherwise one line on stderr\n"
      "names the file, line and column, the op and the JSON path of the problem.");
  sub->callback([graph, quiet] {
    Fusion f = parse_fusion_file(*graph);
    if (!*quiet) std::cout << f.to_text();
  });
}

}  // namespace fuserc::cmd
