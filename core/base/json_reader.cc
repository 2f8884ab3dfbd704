#include "core/base/json_reader.h"

#include <charconv>
#include <cstdio>

#include "core/base/file_io.h"
#include "core/base/text_util.h"

namespace fuserc {
namespace {

// How a character appears in a message: 'x' for printable ASCII, otherwise \xNN.
std::string describe_char(unsigned char c) {
  if (c == '\'') return "\"'\" (JSON strings use double quotes)";
  if (c == '/') return "'/' (JSON has no comments)";
  char buf[16];
  if (c >= 0x20 && c < 0x7f)
    std::snprintf(buf, sizeof buf, "'%c'", c);
  else
    std::snprintf(buf, sizeof buf, "byte \\x%02x", c);
  return buf;
}

class Reader {
 public:
  Reader(std::string_view text, const std::string& file, const JsonReadOptions& options,
         JsonDocument& doc)
      : s_(text), file_(file), opt_(options), doc_(doc) {}

  nlohmann::json parse_document() {
    // A UTF-8 byte order mark is tolerated.
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3, line_start_ = 3;
    skip_ws();
    if (at_end()) fail("empty document: expected a JSON value");
    nlohmann::json v = parse_value("$", 0);
    skip_ws();
    if (!at_end()) fail("unexpected " + describe_char(peek()) + " after the end of the JSON value");
    return v;
  }

 private:
  std::string_view s_;
  const std::string& file_;
  const JsonReadOptions& opt_;
  JsonDocument& doc_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;

  bool at_end() const { return pos_ >= s_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(s_[pos_]); }

  SourcePlace here(size_t at) const {
    if (at >= line_start_) return SourcePlace{file_, line_, static_cast<int>(at - line_start_) + 1};
    // An earlier position (errors about something opened before): count lines again.
    int line = 1;
    size_t start = 0;
    for (size_t i = 0; i < at && i < s_.size(); ++i)
      if (s_[i] == '\n') ++line, start = i + 1;
    return SourcePlace{file_, line, static_cast<int>(at - start) + 1};
  }

  // "line 2, column 9"
  std::string line_col(size_t at) const {
    SourcePlace p = here(at);
    return "line " + std::to_string(p.line) + ", column " + std::to_string(p.col);
  }

  // Called at the end of the input.
  [[noreturn]] void fail_unclosed(const char* what, size_t open) const {
    fail(std::string("unexpected end of input: the ") + what + " opened at " + line_col(open) +
         " is not closed");
  }

  [[noreturn]] void fail(const std::string& message) const { fail_at(pos_, message); }
  [[noreturn]] void fail_at(size_t at, const std::string& message) const {
    throw UserError(here(at), message);
  }

  void skip_ws() {
    while (!at_end()) {
      char c = s_[pos_];
      if (c == '\n') {
        ++pos_;
        ++line_;
        line_start_ = pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  void record(const std::string& path, size_t at) {
    if (opt_.record_positions) doc_.positions.emplace(path, here(at));
  }

  nlohmann::json parse_value(const std::string& path, int depth) {
    if (at_end()) fail("unexpected end of input: expected a JSON value");
    size_t start = pos_;
    record(path, start);
    unsigned char c = peek();
    switch (c) {
      case '{': return parse_object(path, depth + 1);
      case '[': return parse_array(path, depth + 1);
      case '"': return parse_string();
      case 't': expect_word("true"); return true;
      case 'f': expect_word("false"); return false;
      case 'n': expect_word("null"); return nullptr;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
        fail("expected a JSON value, found " + describe_char(c));
    }
  }

  void expect_word(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) {
      fail("invalid literal: expected '" + std::string(word) + "'");
    }
    pos_ += word.size();
  }

  void check_depth(int depth) const {
    if (depth > opt_.max_depth)
      fail("nesting deeper than " + std::to_string(opt_.max_depth) + " levels");
  }

  nlohmann::json parse_object(const std::string& path, int depth) {
    check_depth(depth);
    size_t open = pos_;
    ++pos_;  // '{'
    nlohmann::json obj = nlohmann::json::object();
    skip_ws();
    if (!at_end() && peek() == '}') {
      ++pos_;
      return obj;
    }
    while (true) {
      skip_ws();
      if (at_end()) fail_unclosed("object", open);
      if (peek() != '"') fail("expected a string key in object, found " + describe_char(peek()));
      size_t key_at = pos_;
      std::string key = parse_string().get<std::string>();
      if (obj.contains(key)) fail_at(key_at, "duplicate key " + quote(key));
      skip_ws();
      if (at_end()) fail_unclosed("object", open);
      if (peek() != ':') fail("expected ':' after object key, found " + describe_char(peek()));
      ++pos_;
      skip_ws();
      obj[key] = parse_value(json_path_member(path, key), depth);
      skip_ws();
      if (at_end()) fail_unclosed("object", open);
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return obj;
      }
      fail("expected ',' or '}' in object, found " + describe_char(peek()));
    }
  }

  nlohmann::json parse_array(const std::string& path, int depth) {
    check_depth(depth);
    size_t open = pos_;
    ++pos_;  // '['
    nlohmann::json arr = nlohmann::json::array();
    skip_ws();
    if (!at_end() && peek() == ']') {
      ++pos_;
      return arr;
    }
    while (true) {
      skip_ws();
      if (at_end()) fail_unclosed("array", open);
      arr.push_back(parse_value(json_path_index(path, arr.size()), depth));
      skip_ws();
      if (at_end()) fail_unclosed("array", open);
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return arr;
      }
      fail("expected ',' or ']' in array, found " + describe_char(peek()));
    }
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  uint32_t parse_hex4() {
    if (pos_ + 4 > s_.size()) fail("unterminated \\u escape in string");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        fail_at(pos_ - 1, "invalid hex digit in \\u escape");
    }
    return v;
  }

  // Validates one UTF-8 sequence starting at pos_ and appends it.
  void copy_utf8(std::string& out) {
    size_t start = pos_;
    unsigned char c = peek();
    int len;
    uint32_t cp;
    if (c < 0x80) {
      len = 1, cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      fail("invalid UTF-8 in string");
    }
    if (pos_ + len > s_.size()) fail("invalid UTF-8 in string (truncated sequence)");
    for (int k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s_[pos_ + k]);
      if ((cc & 0xC0) != 0x80) fail("invalid UTF-8 in string");
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      fail("invalid UTF-8 in string (overlong or out-of-range sequence)");
    out.append(s_.substr(start, len));
    pos_ += len;
  }

  nlohmann::json parse_string() {
    size_t open = pos_;
    ++pos_;  // '"'
    std::string out;
    while (true) {
      if (at_end()) fail_unclosed("string", open);
      unsigned char c = peek();
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\n' || c == '\r')
        fail("the string opened at " + line_col(open) +
             " is not closed before the end of the line");
      if (c < 0x20) fail("control character " + describe_char(c) + " in string (escape it)");
      if (c != '\\') {
        copy_utf8(out);
        continue;
      }
      ++pos_;
      if (at_end()) fail_unclosed("string", open);
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = parse_hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(pos_, 2) != "\\u") fail("unpaired surrogate in \\u escape");
            pos_ += 2;
            uint32_t lo = parse_hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("unpaired surrogate in \\u escape");
          }
          if (cp == 0) fail("\\u0000 is not allowed in strings");
          append_utf8(out, cp);
          break;
        }
        default:
          fail_at(pos_ - 1, std::string("invalid escape '\\") +
                                (e >= 0x20 && e < 0x7f ? std::string(1, e) : "?") + "' in string");
      }
    }
  }

  nlohmann::json parse_number() {
    size_t start = pos_;
    bool integral = true;
    if (peek() == '-') ++pos_;
    if (at_end() || !(peek() >= '0' && peek() <= '9')) fail("invalid number: expected a digit");
    if (peek() == '0') {
      ++pos_;
      if (!at_end() && peek() >= '0' && peek() <= '9')
        fail("invalid number: leading zeros are not allowed");
    } else {
      while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    }
    if (!at_end() && peek() == '.') {
      integral = false;
      ++pos_;
      if (at_end() || !(peek() >= '0' && peek() <= '9'))
        fail("invalid number: expected a digit after '.'");
      while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      integral = false;
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (at_end() || !(peek() >= '0' && peek() <= '9'))
        fail("invalid number: expected a digit in the exponent");
      while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    }
    std::string_view tok = s_.substr(start, pos_ - start);
    const char* b = tok.data();
    const char* e = tok.data() + tok.size();
    if (integral) {
      int64_t v = 0;
      auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e)
        fail_at(start, "integer " + quote(tok, 40) + " does not fit in 64 bits");
      return v;
    }
    double d = 0;
    auto r = std::from_chars(b, e, d);
    if (r.ec != std::errc() || r.ptr != e)
      fail_at(start, "number " + quote(tok, 40) + " is out of the range of a double");
    return d;
  }
};

}  // namespace

std::string json_path_member(const std::string& parent, std::string_view key) {
  if (is_identifier(key)) return parent + "." + std::string(key);
  return parent + "[" + nlohmann::json(std::string(key)).dump(-1, ' ', true) + "]";
}

std::string json_path_index(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

SourcePlace JsonDocument::place(const std::string& path) const {
  std::string p = path;
  while (true) {
    if (auto it = positions.find(p); it != positions.end()) return it->second;
    // Strip the last component: ".name", "[3]" or "[\"key\"]".
    size_t cut = std::string::npos;
    if (!p.empty() && p.back() == ']') {
      cut = p.rfind('[');
    } else {
      cut = p.rfind('.');
    }
    if (cut == std::string::npos || cut == 0) break;
    p.resize(cut);
  }
  return SourcePlace{file};
}

JsonDocument read_json(std::string_view text, const std::string& file,
                       const JsonReadOptions& options) {
  JsonDocument doc;
  doc.file = file;
  if (text.size() > options.max_bytes)
    throw UserError(SourcePlace{file}, "file too large (" + std::to_string(text.size()) +
                                           " bytes; the limit is " +
                                           std::to_string(options.max_bytes) + ")");
  Reader reader(text, file, options, doc);
  doc.root = reader.parse_document();
  return doc;
}

JsonDocument read_json_file(const std::string& path, const JsonReadOptions& options) {
  std::string text = read_file(path, options.max_bytes + 1);
  return read_json(text, path, options);
}

}  // namespace fuserc
