// Owns small text helpers shared by the front ends: identifier checks and "did you mean"
// suggestions for misspelled keys and names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fuserc {

// [A-Za-z_][A-Za-z0-9_]*
bool is_identifier(std::string_view s);

// The candidate closest to `word` by edit distance, if it is close enough to be a plausible
// typo (distance <= 2, and less than half the word's length); empty otherwise.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "1 entry", "3 entries"
std::string count_of(int64_t n, const char* singular, const char* plural);
// "3 kernels per run", "1 kernel and 2 library steps per run".
std::string steps_per_run(int64_t kernels, int64_t library_steps);

// "a, b, c"
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

}  // namespace fuserc
