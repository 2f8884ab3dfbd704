// `fuserc inputs GRAPH.json -o IN.safetensors`: random inputs for a graph.
#include "cmd/commands.h"
#include "cmd/symbol_bindings.h"
#include "core/base/safetensors.h"
#include "core/eval/random_inputs.h"
#include "core/frontend/graph_parser.h"

namespace fuserc::cmd {

void add_inputs_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "inputs", "Write random input tensors for a graph (for eval, run and benchmarks).");
  struct Options {
    std::string graph, out, bind;
    uint64_t seed = 0;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("GRAPH", o->graph, "the fusion graph (JSON)")->required();
  sub->add_option("-o,--output", o->out, "safetensors file to write")->required();
  sub->add_option("--bind", o->bind,
                  "symbol values, e.g. N=4096,H=1024 (default: each symbol's hint)");
  sub->add_option("--seed", o->seed, "random seed (default 0)");
  sub->footer(
      "Floats are uniform in each input's \"range\" (default [-2, 2]), integers uniform\n"
      "in its integers, bools fair coin flips. An integer input without a range that\n"
      "indexes (index_select, gather; through views and casts) stays inside the extent\n"
      "it indexes. A scalar input that sets a symbol gets the symbol's value; constants\n"
      "(inputs with \"data\") are the graph's and are not written.");
  sub->callback([o] {
    Fusion f = parse_fusion_file(o->graph);
    auto symbols = choose_symbol_values(f, parse_bindings(o->bind));
    TensorMap tensors = make_random_inputs(f, symbols, o->seed);
    std::vector<std::pair<std::string, const HostTensor*>> list;
    for (ValueId id : f.inputs) {
      if (f.value(id).is_constant()) continue;  // the graph holds its values
      const std::string& name = f.value(id).name;
      list.emplace_back(name, &tensors.at(name));
    }
    write_safetensors(o->out, list);
  });
}

}  // namespace fuserc::cmd
