#include "core/passes/pass_context.h"

#include <cstdio>
#include <iostream>

namespace fuserc {

void PassContext::dump(const std::string& stage, const std::function<std::string()>& text) const {
  if (!should_dump(stage)) return;
  std::ostream& out = dump_out ? *dump_out : std::cerr;
  out << "=== after " << stage << " ===\n" << text();
  out.flush();
}

void PassContext::record(const std::string& stage, double microseconds) {
  for (auto& [name, us] : timings_) {
    if (name == stage) {
      us += microseconds;
      return;
    }
  }
  timings_.emplace_back(stage, microseconds);
}

void PassContext::record_step(const std::string& stage, const std::string& step,
                              double microseconds) {
  for (auto& s : steps_) {
    if (s.stage == stage && s.step == step) {
      s.microseconds += microseconds;
      return;
    }
  }
  steps_.push_back({stage, step, microseconds});
}

std::string PassContext::timing_table() const {
  double total = 0;
  for (const auto& t : timings_) total += t.second;
  std::string s = "stage                      time (ms)   share\n";
  char line[128];
  for (const auto& [name, us] : timings_) {
    std::snprintf(line, sizeof line, "%-24s %11.3f  %5.1f%%\n", name.c_str(), us / 1000.0,
                  total > 0 ? 100.0 * us / total : 0.0);
    s += line;
    for (const Step& step : steps_) {
      if (step.stage != name) continue;
      const std::string label = "  " + step.step;
      std::snprintf(line, sizeof line, "%-24s %11.3f  %5.1f%%\n", label.c_str(),
                    step.microseconds / 1000.0,
                    total > 0 ? 100.0 * step.microseconds / total : 0.0);
      s += line;
    }
  }
  std::snprintf(line, sizeof line, "%-24s %11.3f\n", "total", total / 1000.0);
  return s + line;
}

}  // namespace fuserc
