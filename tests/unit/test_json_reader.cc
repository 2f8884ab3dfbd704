// Tests for the strict JSON reader: values, positions, and refusal of hostile input.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "core/base/json_reader.h"

using fuserc::JsonReadOptions;
using fuserc::read_json;
using fuserc::UserError;

namespace {

std::string error_of(const std::string& text, JsonReadOptions opt = {}) {
  try {
    read_json(text, "f.json", opt);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("json reader parses values and keeps integers apart from floats", "[json]") {
  auto doc = read_json(R"({"a": 1, "b": -2.5, "c": [true, false, null], "d": "x\u00e9\n",
                         "e": 9223372036854775807, "f": 1e3, "g": -0})",
                       "f.json");
  const auto& j = doc.root;
  CHECK(j["a"].is_number_integer());
  CHECK(j["a"].get<int64_t>() == 1);
  CHECK(j["b"].is_number_float());
  CHECK(j["b"].get<double>() == -2.5);
  CHECK(j["c"].size() == 3);
  CHECK(j["c"][2].is_null());
  CHECK(j["d"].get<std::string>() == "x\xc3\xa9\n");
  CHECK(j["e"].get<int64_t>() == INT64_MAX);
  CHECK(j["f"].is_number_float());
  CHECK(j["f"].get<double>() == 1000.0);
  CHECK(j["g"].is_number_integer());
}

TEST_CASE("json reader records line and column of every value", "[json]") {
  auto doc = read_json("{\n  \"ops\": [\n    {\"op\": \"add\"},\n    7\n  ]\n}", "g.json");
  CHECK(doc.place("$").str() == "g.json:1:1");
  CHECK(doc.place("$.ops").str() == "g.json:2:10");
  CHECK(doc.place("$.ops[0]").str() == "g.json:3:5");
  CHECK(doc.place("$.ops[0].op").str() == "g.json:3:12");
  CHECK(doc.place("$.ops[1]").str() == "g.json:4:5");
  // Unknown paths fall back to the nearest recorded ancestor.
  CHECK(doc.place("$.ops[0].args[2]").str() == "g.json:3:5");
}

TEST_CASE("json paths quote keys that are not identifiers", "[json]") {
  CHECK(fuserc::json_path_member("$", "name") == "$.name");
  CHECK(fuserc::json_path_member("$", "a b") == "$[\"a b\"]");
  CHECK(fuserc::json_path_index("$.ops", 3) == "$.ops[3]");
}

TEST_CASE("json syntax errors name file, line and column", "[json]") {
  CHECK(error_of("{\"a\": 1,\n \"b\" 2}") ==
        "f.json:2:6: expected ':' after object key, found '2'");
  CHECK(error_of("[1, 2") ==
        "f.json:1:6: unexpected end of input: the array opened at line 1, column 1 is not closed");
  CHECK(error_of("{\"a\": [1,\n  {\"b\": 2}") ==
        "f.json:2:11: unexpected end of input: the array opened at line 1, column 7 is not closed");
  CHECK(error_of("") == "f.json:1:1: empty document: expected a JSON value");
  CHECK(error_of("   \n  ") == "f.json:2:3: empty document: expected a JSON value");
  CHECK(error_of("{} x") == "f.json:1:4: unexpected 'x' after the end of the JSON value");
  CHECK(error_of("[01]") == "f.json:1:3: invalid number: leading zeros are not allowed");
  CHECK(error_of("[tru]") == "f.json:1:2: invalid literal: expected 'true'");
  CHECK(error_of("{\"a\":1,\"a\":2}") == "f.json:1:8: duplicate key 'a'");
  CHECK(error_of("\"abc") ==
        "f.json:1:5: unexpected end of input: the string opened at line 1, column 1 is not closed");
  CHECK(error_of("\"a\\qb\"") == "f.json:1:4: invalid escape '\\q' in string");
  CHECK(error_of("[1,]") == "f.json:1:4: expected a JSON value, found ']'");
}

TEST_CASE("json reader refuses hostile input with one-line messages", "[json]") {
  CHECK(error_of(std::string(100000, '[')) == "f.json:1:65: nesting deeper than 64 levels");
  CHECK(error_of("[123456789012345678901234567890]") ==
        "f.json:1:2: integer '123456789012345678901234567890' does not fit in 64 bits");
  CHECK(error_of("[1e999]") == "f.json:1:2: number '1e999' is out of the range of a double");
  CHECK(error_of("\"\xff\"") == "f.json:1:2: invalid UTF-8 in string");
  CHECK(error_of("\"\xc0\xaf\"") ==
        "f.json:1:2: invalid UTF-8 in string (overlong or out-of-range sequence)");
  CHECK(error_of(std::string("\"a\0b\"", 5)) ==
        "f.json:1:3: control character byte \\x00 in string (escape it)");
  CHECK(error_of(std::string("\x00\x01\x02", 3)) ==
        "f.json:1:1: expected a JSON value, found byte \\x00");
  CHECK(error_of("\"\\ud800\"") == "f.json:1:8: unpaired surrogate in \\u escape");
  JsonReadOptions small;
  small.max_bytes = 4;
  CHECK(error_of("[1,2,3]", small) == "f.json: file too large (7 bytes; the limit is 4)");
}

TEST_CASE("json reader never crashes on random bytes", "[json]") {
  std::mt19937 rng(1234);
  const std::string alphabet = "{}[]:,\"\\tfn0123456789.eE+- \nabcxu\x80\xff";
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text;
    int n = static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) text += alphabet[rng() % alphabet.size()];
    try {
      read_json(text, "r.json");
    } catch (const UserError& e) {
      std::string msg = e.what();
      REQUIRE(msg.rfind("r.json:", 0) == 0);
      REQUIRE(msg.find('\n') == std::string::npos);
    }
  }
}
