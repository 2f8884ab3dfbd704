// Tests for atomic whole-file writes under failure: a full disk (RLIMIT_FSIZE: the write fails
// with EFBIG) and a process killed in the middle of a write (SIGXFSZ's default action) leave
// the previous file intact and no other file in the folder; a missing folder is a UserError.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "temp_dir.h"

using namespace fuserc;
using fuserc::testing::TempDir;

namespace {

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.insert(e.path().filename().string());
  return names;
}

// Runs write_file_atomically(path, 1 MiB) in a child process limited to 64 KiB files, with
// SIGXFSZ ignored (the write fails: exit 0 if the UserError names the file and says "File too
// large") or left at its default (the process is killed mid-write). Returns the wait status.
int write_in_limited_child(const std::string& path, bool ignore_sigxfsz) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, ignore_sigxfsz ? SIG_IGN : SIG_DFL);
    struct rlimit r = {64 << 10, 64 << 10};
    ::setrlimit(RLIMIT_FSIZE, &r);
    try {
      write_file_atomically(path, std::string(1 << 20, 'n'));
    } catch (const UserError& e) {
      std::string msg = e.what();
      ::_exit(msg == path + ": cannot write: File too large" ? 0 : 2);
    }
    ::_exit(3);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("file io: a full disk leaves the previous file and nothing else", "[file_io]") {
  TempDir dir;
  const std::string path = dir / "p.fpkg";
  write_file_atomically(path, "previous");
  int status = write_in_limited_child(path, true);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_file(path) == "previous");
  CHECK(names_in(dir.path()) == std::set<std::string>{"p.fpkg"});
}

TEST_CASE("file io: a process killed mid-write leaves no temporary file", "[file_io]") {
  TempDir dir;
  const std::string path = dir / "p.fpkg";
  write_file_atomically(path, "previous");
  int status = write_in_limited_child(path, false);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGXFSZ);
  CHECK(read_file(path) == "previous");
  // The unnamed temporary died with the process.
  CHECK(names_in(dir.path()) == std::set<std::string>{"p.fpkg"});
}

TEST_CASE("file io: a missing or non-folder output folder is a clear error", "[file_io]") {
  TempDir dir;
  CHECK_THROWS_WITH(write_file_atomically(dir / "missing/p.fpkg", "x"),
                    dir / "missing/p.fpkg" + ": cannot write: No such file or directory");
  write_file_atomically(dir / "file", "x");
  CHECK_THROWS_WITH(write_file_atomically(dir / "file/p.fpkg", "x"),
                    dir / "file/p.fpkg" + ": cannot write: Not a directory");
  CHECK(names_in(dir.path()) == std::set<std::string>{"file"});
}
