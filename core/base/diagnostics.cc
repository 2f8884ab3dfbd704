#include "core/base/diagnostics.h"

#include <cstdio>

namespace fuserc {

std::string SourcePlace::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (col > 0) s += ":" + std::to_string(col);
  }
  return s;
}

std::string UserError::one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

void internal_error(const char* file, int line, const std::string& message) {
  std::string where = file;
  if (auto slash = where.rfind('/'); slash != std::string::npos) where = where.substr(slash + 1);
  throw InternalError(message + " [" + where + ":" + std::to_string(line) + "]");
}

std::string quote(std::string_view text, size_t max_len) {
  std::string out = "'";
  size_t n = 0;
  for (char c : text) {
    if (n++ == max_len) {
      out += "...";
      break;
    }
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\'' && c != '\\') {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    }
  }
  return out + "'";
}

}  // namespace fuserc
