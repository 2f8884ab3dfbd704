#include "core/segment/segment_dot.h"

#include <sstream>

#include "core/base/dtype.h"
#include "core/base/text_util.h"
#include "core/ir/op_table.h"

namespace fuserc {

std::string dot_quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

namespace {

std::string bytes_text(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  std::ostringstream s;
  s.precision(u == 0 ? 0 : 3);
  s << v << " " << units[u];
  return s.str();
}

}  // namespace

std::string segmentation_dot(const Fusion& f, const SegmentedFusion& s,
                             const HeuristicHints& hints) {
  std::vector<int> segment_of(f.ops.size(), -1);
  for (size_t i = 0; i < s.segments.size(); ++i)
    for (int k : s.segments[i].ops) segment_of[k] = static_cast<int>(i);
  int64_t library_steps = 0;
  for (const auto& seg : s.segments) library_steps += seg.scheduler == SchedulerKind::Library;
  const auto kernels = static_cast<int64_t>(s.segments.size()) - library_steps;
  std::ostringstream d;
  d << "digraph " << dot_quoted(f.name) << " {\n"
    << "  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=9];\n"
    << "  label="
    << dot_quoted(f.name + ": " + steps_per_run(kernels, library_steps) +
                  " (sizes at the hints)")
    << ";\n";
  for (ValueId v : f.inputs) {
    const Value& val = f.value(v);
    // Constants (the package's values) are drawn apart from what the caller passes.
    if (val.is_constant())
      d << "  v" << v << " [shape=box, style=\"filled,dashed\", fillcolor=\"#f4ecd8\", label="
        << dot_quoted(val.name + "\nconstant " + dtype_name(val.dtype) +
                      shape_to_string(val.shape))
        << "];\n";
    else
      d << "  v" << v << " [shape=box, style=filled, fillcolor=\"#e8e8e8\", label="
        << dot_quoted(val.name + "\n" + dtype_name(val.dtype) + shape_to_string(val.shape))
        << "];\n";
  }
  for (size_t i = 0; i < s.segments.size(); ++i) {
    const Segment& seg = s.segments[i];
    const bool library = seg.scheduler == SchedulerKind::Library;
    d << "  subgraph cluster_" << i << " {\n    style=rounded; color=\""
      << (library ? "#207040" : "#4060a0") << "\";\n    label="
      << dot_quoted(library ? "library step " + std::to_string(i) + ": matrix product"
                            : "kernel " + std::to_string(i) + ": " + scheduler_name(seg.scheduler))
      << ";\n";
    for (int k : seg.ops) {
      const Op& op = f.ops[k];
      const Value& out = f.value(op.outs.at(0));
      bool is_output = false;
      for (ValueId o : op.outs) is_output = is_output || f.is_output(o);
      d << "    op" << k << " [shape=ellipse" << (is_output ? ", peripheries=2" : "")
        << ", label=" << dot_quoted(out.name + " = " + op.info().name) << "];\n";
    }
    d << "  }\n";
  }
  // Edges: operand -> reader. Within a kernel thin; across kernels (or from a graph input)
  // the tensor goes through global memory: bold, labelled with its size.
  for (size_t k = 0; k < f.ops.size(); ++k) {
    if (segment_of[k] < 0) continue;
    std::vector<ValueId> seen;
    for (const Operand& a : f.ops[k].args) {
      if (a.is_literal()) continue;
      bool repeated = false;
      for (ValueId v : seen) repeated = repeated || v == a.value;
      if (repeated) continue;
      seen.push_back(a.value);
      const Value& val = f.value(a.value);
      std::string from =
          val.def_op < 0 ? "v" + std::to_string(a.value) : "op" + std::to_string(val.def_op);
      d << "  " << from << " -> op" << k;
      if (val.def_op >= 0 && segment_of[val.def_op] != segment_of[k]) {
        int64_t bytes = hints.value_of(val.numel()) * static_cast<int64_t>(dtype_size(val.dtype));
        d << " [style=bold, color=\"#c03020\", fontcolor=\"#c03020\", label="
          << dot_quoted(val.name + " " + dtype_name(val.dtype) + shape_to_string(val.shape) + "\n" +
                        bytes_text(bytes))
          << "]";
      }
      d << ";\n";
    }
  }
  d << "}\n";
  return d.str();
}

}  // namespace fuserc
