#include "core/base/text_util.h"

#include <algorithm>

namespace fuserc {

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

namespace {
// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring letters each count one edit.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}
}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.size() > 64) return "";
  std::string best;
  size_t best_d = 3;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d && d * 2 < std::max(word.size(), c.size())) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string m = closest_match(word, candidates);
  return m.empty() ? "" : " (did you mean '" + m + "'?)";
}

std::string count_of(int64_t n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

std::string steps_per_run(int64_t kernels, int64_t library_steps) {
  std::string s = count_of(kernels, "kernel", "kernels");
  if (library_steps > 0) s += " and " + count_of(library_steps, "library step", "library steps");
  return s + " per run";
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

}  // namespace fuserc
