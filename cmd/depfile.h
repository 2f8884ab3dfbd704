// Owns writing dependency files in Make syntax ("target: dep1 dep2"), which Make includes and
// Ninja reads (depfile = ...), so that a build system reruns fuserc exactly when an input
// changed. Paths are escaped the way both read them back.
#pragma once

#include <string>
#include <vector>

namespace fuserc::cmd {

// "OUT.fpkg: graph.json\n" with spaces, '#', '$' (and backslashes before them) escaped.
std::string make_depfile(const std::string& target, const std::vector<std::string>& deps);

}  // namespace fuserc::cmd
