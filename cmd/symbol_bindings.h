// Owns the "--bind N=4096,H=1024" option syntax shared by the commands that take symbol values.
#pragma once

#include <map>
#include <string>

namespace fuserc::cmd {

// Parses "N=4096,H=1024" (also accepts several comma-separated lists joined by ',').
// Throws UsageError naming the offending item.
std::map<std::string, int64_t> parse_bindings(const std::string& text);

}  // namespace fuserc::cmd
