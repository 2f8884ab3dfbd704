#include "cmd/symbol_bindings.h"

#include <charconv>
#include <sstream>

#include "core/base/diagnostics.h"
#include "core/base/text_util.h"

namespace fuserc::cmd {

std::map<std::string, int64_t> parse_bindings(const std::string& text) {
  std::map<std::string, int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (eq == std::string::npos || !is_identifier(name))
      throw UsageError("--bind: expected NAME=VALUE, got " + quote(item));
    std::string num = item.substr(eq + 1);
    int64_t v = 0;
    auto r = std::from_chars(num.data(), num.data() + num.size(), v);
    if (r.ec != std::errc() || r.ptr != num.data() + num.size() || v < 0)
      throw UsageError("--bind: the value of " + name + " must be a non-negative integer, got " +
                       quote(num));
    if (!out.emplace(name, v).second) throw UsageError("--bind: " + name + " is given twice");
  }
  return out;
}

}  // namespace fuserc::cmd
