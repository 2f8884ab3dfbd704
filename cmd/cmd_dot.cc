// `fuserc dot GRAPH.json|PKG [-o FILE]`: a Graphviz picture of the kernels. From a graph: its ops
// with each kernel a cluster (core/segment/segment_dot.h). From a package: its launches and the
// buffers they read and write, with their sizes as formulas over the symbols. `-o X.svg` renders
// SVG with Graphviz's `dot` when it is installed.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cmd/commands.h"
#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "core/frontend/graph_parser.h"
#include "core/passes/presegmentation.h"
#include "core/segment/segment_dot.h"
#include "core/segment/segmenter.h"
#include "runtime/executable.h"
#include "runtime/package_report.h"

namespace fuserc::cmd {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string graph_dot(const std::string& path) {
  Fusion f = parse_fusion_file(path);
  PassContext ctx;
  run_presegmentation_passes(f, ctx);
  HeuristicHints hints = HeuristicHints::from(f);
  SegmentedFusion s = segment_graph(f, all_schedulers(), hints);
  return segmentation_dot(f, s, hints);
}

// Launches as boxes, buffers as ellipses labelled with their bytes; edges are reads and writes.
std::string package_dot(const std::string& path) {
  auto exe = Executable::load(path);
  exe->package().verify_all();
  nlohmann::json j = package_json(*exe, nullptr);
  std::map<std::string, std::string> scheduler;
  for (const auto& k : j["kernels"]) scheduler[k["name"]] = k["scheduler"];
  std::ostringstream d;
  d << "digraph " << dot_quoted(j["name"].get<std::string>()) << " {\n"
    << "  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  for (const auto& b : j["buffers"]) {
    std::string kind = b["kind"];
    d << "  " << dot_quoted("b:" + b["name"].get<std::string>()) << " [shape=ellipse"
      << (kind == "intermediate" ? ", color=\"#c03020\"" : ", style=filled, fillcolor=\"#e8e8e8\"")
      << ", label="
      << dot_quoted(b["name"].get<std::string>() + " (" + kind + ")\n" +
                    b["dtype"].get<std::string>() + ", " + b["bytes"].get<std::string>() + " bytes")
      << "];\n";
  }
  for (size_t l = 0; l < j["plan"].size(); ++l) {
    const auto& launch = j["plan"][l];
    std::string node = "launch " + std::to_string(l);
    if (launch.contains("library")) {  // a library step: its own kind of node
      d << "  " << dot_quoted(node) << " [shape=component, color=\"#207040\", label="
        << dot_quoted("library step " + std::to_string(l) + ": matrix product\n" +
                      launch["library"].get<std::string>())
        << "];\n";
    } else {
      std::string kernel = launch["variants"][0]["kernel"];
      d << "  " << dot_quoted(node) << " [shape=box, style=rounded, color=\"#4060a0\", label="
        << dot_quoted("kernel " + std::to_string(l) + ": " + scheduler[kernel] + "\n" + kernel)
        << "];\n";
    }
    for (const auto& r : launch["reads"])
      d << "  " << dot_quoted("b:" + r.get<std::string>()) << " -> " << dot_quoted(node) << ";\n";
    for (const auto& w : launch["writes"])
      d << "  " << dot_quoted(node) << " -> " << dot_quoted("b:" + w.get<std::string>()) << ";\n";
  }
  d << "}\n";
  return d.str();
}

// DOT to SVG through Graphviz's `dot`.
std::string to_svg(const std::string& dot_text, const std::string& out) {
  std::string tmp = out + ".dot.tmp";
  write_file_atomically(tmp, dot_text);
  std::string cmd = "dot -Tsvg '" + tmp + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string svg;
  if (p) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) svg.append(buf, n);
  }
  int status = p ? pclose(p) : -1;
  std::remove(tmp.c_str());
  if (status != 0 || svg.empty())
    throw UserError(SourcePlace{out},
                    "cannot render SVG: Graphviz's `dot` is not installed or failed (write a "
                    ".dot file instead)");
  return svg;
}

}  // namespace

void add_dot_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "dot",
      "Draw the kernels as Graphviz DOT: from a graph, its ops with each kernel a cluster "
      "labelled with its scheduler and the tensors that cross kernels marked with their sizes; "
      "from a package, its launches and buffers.");
  struct Options {
    std::string input, output;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("INPUT", o->input, "a fusion graph (.json) or a package (.fpkg)")->required();
  sub->add_option("-o,--output", o->output,
                  "the file to write (default: standard output); a name ending in .svg is "
                  "rendered with Graphviz's dot");
  sub->footer("Render by hand with: dot -Tsvg picture.dot -o picture.svg");
  sub->callback([o] {
    std::string text = ends_with(o->input, ".json") ? graph_dot(o->input) : package_dot(o->input);
    if (o->output.empty()) {
      std::cout << text;
      return;
    }
    if (ends_with(o->output, ".svg")) text = to_svg(text, o->output);
    write_file_atomically(o->output, text);
  });
}

}  // namespace fuserc::cmd
