// Owns whole-file reads and atomic whole-file writes. Every file fuserc produces goes through
// write_file_atomically or write_file_replacing (or their streamed forms, for files too large
// to hold in memory), so an interrupted or failed run never leaves a partial output.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace fuserc {

// Reads a whole file; throws UserError naming the file if it is missing, a directory or
// unreadable, or larger than max_bytes.
std::string read_file(const std::string& path, size_t max_bytes = size_t(1) << 34);

// Writes `data` to a temporary file beside `path` (same directory), flushes it, then renames
// it over `path`. On failure the temporary file is removed and a UserError names `path`.
// The temporary is an unnamed O_TMPFILE file, named only once complete, so a process killed
// mid-write leaves no file behind (on file systems without O_TMPFILE, a named temporary
// `.NAME.tmp.PID.N` is used instead).
void write_file_atomically(const std::string& path, std::string_view data);

// The same without the fsyncs: a reader sees the old file or the whole new one, but after a
// power loss the new one may be damaged. For caches, whose readers check what they read.
void write_file_replacing(const std::string& path, std::string_view data);

// The same two, for contents produced piece by piece: `produce` is called once and calls
// `write` with each piece in order (a piece may point into a mapped file; nothing is copied).
// If a write fails, `write` throws and the UserError names `path`; if `produce` throws, its
// exception propagates. Either way nothing is left at `path` but the previous file.
using WriteBytes = std::function<void(std::string_view)>;
using ProduceBytes = std::function<void(const WriteBytes& write)>;
void write_file_atomically_streamed(const std::string& path, const ProduceBytes& produce);
void write_file_replacing_streamed(const std::string& path, const ProduceBytes& produce);

}  // namespace fuserc
