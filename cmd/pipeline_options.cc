#include "cmd/pipeline_options.h"

#include <nvrtc.h>

#include <algorithm>
#include <sstream>

#include "core/base/diagnostics.h"
#include "core/base/text_util.h"
#include "core/passes/presegmentation.h"

namespace fuserc::cmd {

std::vector<std::string> pipeline_stage_names() {
  std::vector<std::string> names = {"parse"};
  for (const auto& p : presegmentation_passes()) names.push_back(p.name);
  for (const char* n : {"segment", "plan-memory", "lower", "emit"}) names.push_back(n);
  return names;
}

void add_pipeline_flags(CLI::App& sub, PipelineFlags& flags) {
  sub.add_option(
         "--dump-after", flags.dump_after,
         "print the IR after a stage (repeatable): " + join(pipeline_stage_names()) + ", or all")
      ->delimiter(',');
  sub.add_flag("--time-passes", flags.time_passes,
               "print a table of where compile time goes (on stderr)");
}

PassContext make_pass_context(const PipelineFlags& flags) {
  PassContext ctx;
  auto names = pipeline_stage_names();
  for (const auto& d : flags.dump_after) {
    if (d != "all" && std::find(names.begin(), names.end(), d) == names.end())
      throw UsageError("--dump-after: unknown stage " + quote(d) + did_you_mean(d, names) +
                       "; stages: " + join(names) + ", all");
    ctx.dump_after.insert(d);
  }
  ctx.time_passes = flags.time_passes;
  return ctx;
}

std::vector<int> parse_archs(const std::string& text) {
  int count = 0;
  nvrtcGetNumSupportedArchs(&count);
  std::vector<int> supported(static_cast<size_t>(std::max(count, 0)));
  if (count > 0) nvrtcGetSupportedArchs(supported.data());
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::string digits = item.rfind("sm_", 0) == 0 ? item.substr(3) : item;
    int arch = 0;
    bool ok = !digits.empty() && digits.size() <= 4 &&
              std::all_of(digits.begin(), digits.end(), ::isdigit);
    if (ok) arch = std::stoi(digits);
    if (!ok || std::find(supported.begin(), supported.end(), arch) == supported.end()) {
      std::string list;
      for (int s : supported) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(s);
      throw UsageError("--arch: " + quote(item) + " is not an architecture NVRTC can target (" +
                       list + ")");
    }
    if (std::find(out.begin(), out.end(), arch) == out.end()) out.push_back(arch);
  }
  if (out.empty()) throw UsageError("--arch: no architecture given");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace fuserc::cmd
