// Owns strict JSON reading for everything fuserc takes from users (graphs, safetensors
// headers): syntax errors as `file:line:col: message`, a line/column for every value so that
// later semantic errors can point at it, and refusal of hostile input (deep nesting, huge
// numbers, invalid UTF-8, duplicate keys, NUL bytes, trailing garbage) with the same kind of
// one-line message, never a crash. The document itself is an nlohmann::json.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/base/diagnostics.h"

namespace fuserc {

struct JsonReadOptions {
  int max_depth = 64;            // nesting of arrays/objects beyond this is refused
  size_t max_bytes = 64u << 20;  // larger documents are refused
  bool record_positions = true;  // fill JsonDocument::positions
};

// A parsed document and where each of its values started.
//
// Paths use the form "$" for the root, "$.key" for object members (keys that are not
// identifiers are written "$[\"some key\"]"), "$.ops[3].args[1]" for array elements.
// The position of an object member is the position of its value, not its key.
struct JsonDocument {
  nlohmann::json root;
  std::string file;  // as given to read_json, for messages
  std::unordered_map<std::string, SourcePlace> positions;

  // The place of the value at `path`; when the exact path was not recorded, the place of its
  // nearest recorded ancestor; when nothing was recorded, just the file.
  SourcePlace place(const std::string& path) const;
};

// Parses `text` as one JSON document. Throws UserError("file:line:col: message") on any
// syntax error or limit violation. Numbers: a token without fraction or exponent becomes an
// integer (int64; out of range is an error), any other a double (out of range is an error).
JsonDocument read_json(std::string_view text, const std::string& file,
                       const JsonReadOptions& options = {});

// Reads the whole file then parses it. A missing or unreadable file is a UserError naming it.
JsonDocument read_json_file(const std::string& path, const JsonReadOptions& options = {});

// Path helpers used by both the reader and its users.
std::string json_path_member(const std::string& parent, std::string_view key);
std::string json_path_index(const std::string& parent, size_t index);

}  // namespace fuserc
