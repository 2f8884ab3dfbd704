#include "cmd/depfile.h"

#include "core/base/diagnostics.h"

namespace fuserc::cmd {
namespace {

// GNU Make's rules, which Ninja follows: a space or '#' is preceded by a backslash (and the
// backslashes right before it are doubled), '$' is written "$$". A newline cannot be written.
std::string escape(const std::string& path) {
  if (path.find('\n') != std::string::npos || path.find('\r') != std::string::npos)
    throw UserError(SourcePlace{quote(path)}, "a path with a line break cannot go in a depfile");
  std::string out;
  size_t backslashes = 0;
  for (char c : path) {
    if (c == ' ' || c == '#' || c == '\t') {
      out.append(backslashes, '\\');
      out += '\\';
    }
    if (c == '$') out += '$';
    out += c;
    backslashes = c == '\\' ? backslashes + 1 : 0;
  }
  return out;
}

}  // namespace

std::string make_depfile(const std::string& target, const std::vector<std::string>& deps) {
  std::string out = escape(target) + ":";
  for (const auto& d : deps) out += " " + escape(d);
  return out + "\n";
}

}  // namespace fuserc::cmd
