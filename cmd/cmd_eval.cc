// `fuserc eval GRAPH.json --inputs IN --outputs OUT`: the CPU reference interpreter.
#include "cmd/commands.h"
#include "core/base/safetensors.h"
#include "core/eval/interpreter.h"
#include "core/frontend/graph_parser.h"

namespace fuserc::cmd {

void add_eval_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("eval",
                         "Evaluate a graph on the CPU, op by op, with the contract's numerics (the "
                         "reference every kernel is tested against).");
  struct Options {
    std::string graph, inputs, outputs;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("GRAPH", o->graph, "the fusion graph (JSON)")->required();
  sub->add_option("--inputs", o->inputs,
                  "safetensors file with one tensor per graph input (a scalar input is a "
                  "rank-0 tensor); symbol values come from the shapes")
      ->required();
  sub->add_option("--outputs", o->outputs, "safetensors file to write the graph's outputs to")
      ->required();
  sub->footer(
      "f16/bf16 arithmetic runs in f32 and each op's result is rounded to its dtype;\n"
      "reductions of floats accumulate in f64. Nothing is written unless evaluation succeeds.");
  sub->callback([o] {
    Fusion f = parse_fusion_file(o->graph);
    TensorMap inputs = read_safetensors(o->inputs);
    auto outputs = evaluate_fusion(f, inputs, o->inputs);
    std::vector<std::pair<std::string, const HostTensor*>> list;
    for (const auto& [name, t] : outputs) list.emplace_back(name, &t);
    write_safetensors(o->outputs, list);
  });
}

}  // namespace fuserc::cmd
