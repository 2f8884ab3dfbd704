// Owns the two kinds of failure fuserc reports: user errors (bad input, named by file and
// place, in ninja's plain `file:line:col: message` style) and internal errors (a bug in
// fuserc, said to be one). Every layer throws these; only cmd/ prints them and picks the exit
// status.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace fuserc {

// Where in an input something is: the file, and either a line/column (JSON syntax, or any
// value whose position the reader recorded) or nothing more.
struct SourcePlace {
  std::string file;
  int line = 0;  // 1-based; 0 when unknown
  int col = 0;   // 1-based byte column; 0 when unknown

  std::string str() const;  // "file", "file:line:col"
};

// A problem with what the user gave us. what() is the whole one-line message without the
// "fuserc: error: " prefix, e.g. "g.json:12:7: op 3 'add' (out 'z') at $.ops[3].args[1]: ...".
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(one_line(message)) {}
  UserError(const SourcePlace& place, const std::string& message)
      : std::runtime_error(one_line(place.str() + ": " + message)) {}

  // Newlines and control characters folded so that the message stays on one line.
  static std::string one_line(std::string_view text);
};

// A usage mistake on the command line (exit status 2 rather than 1).
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message)
      : std::runtime_error(UserError::one_line(message)) {}
};

// A broken invariant inside fuserc: a bug, whatever the input was.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& message);

// Quote a user-provided string for a message: printable ASCII as is, anything else as \xNN,
// long strings shortened. Keeps hostile input from breaking the one-line error format.
std::string quote(std::string_view text, size_t max_len = 64);

}  // namespace fuserc

// Invariant checks: FUSERC_CHECK(cond, "message" + detail). Cheap enough to stay in release.
#define FUSERC_CHECK(cond, msg)                                                  \
  do {                                                                           \
    if (!(cond)) ::fuserc::internal_error(__FILE__, __LINE__, std::string(msg)); \
  } while (0)
#define FUSERC_UNREACHABLE(msg) ::fuserc::internal_error(__FILE__, __LINE__, std::string(msg))
