#include "core/base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>

#include "core/base/diagnostics.h"

namespace fuserc {
namespace {

std::string error_text(int err) {
  return std::system_category().message(err);
}

[[noreturn]] void fail_read(const std::string& path, const std::string& why) {
  throw UserError(SourcePlace{path}, "cannot read: " + why);
}

[[noreturn]] void fail_write(const std::string& path, int err) {
  throw UserError(SourcePlace{path}, "cannot write: " + error_text(err));
}

// Closes a file descriptor when it goes out of scope (unless released).
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Closes now and returns 0 or the errno of a failed close.
  int close_now() {
    int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

// Writes all of `data`, retrying short writes and interruptions; returns 0 or an errno.
int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

std::string temp_path_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + base + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

// Makes the rename itself durable; failure here does not undo a completed write.
void sync_directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string read_file(const std::string& path, size_t max_bytes) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) fail_read(path, error_text(errno));
  FdCloser closer(fd);

  struct stat st;
  if (::fstat(fd, &st) != 0) fail_read(path, error_text(errno));
  if (S_ISDIR(st.st_mode)) fail_read(path, error_text(EISDIR));
  const std::string too_large = "file is too large (limit " + std::to_string(max_bytes) + " bytes)";
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
    fail_read(path, too_large);
  }

  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_read(path, error_text(errno));
    }
    if (n == 0) break;
    if (static_cast<size_t>(n) > max_bytes - out.size()) fail_read(path, too_large);
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

namespace {

// Opens an unnamed file in the directory of `path` (O_TMPFILE): if the process dies before it
// is linked, the kernel frees it, so a killed write leaves nothing behind. -1 with errno set
// when the file system has no O_TMPFILE (the caller falls back to a named temporary).
int open_unnamed_beside(const std::string& path) {
  static const bool have_proc = ::access("/proc/self/fd", X_OK) == 0;  // linkat needs it
  if (!have_proc) {
    errno = EOPNOTSUPP;
    return -1;
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int fd;
  do {
    fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// Thrown by the `write` given to a producer when a write fails, caught in write_via_rename.
struct WriteFailed {
  int err;
};

void write_via_rename(const std::string& path, const ProduceBytes& produce, bool durable) {
  if (path.empty()) fail_write(path, ENOENT);
  const std::string temp = temp_path_for(path);
  int fd = open_unnamed_beside(path);
  const bool unnamed = fd >= 0;
  if (!unnamed && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    fail_write(path, errno);
  if (!unnamed) {
    do {
      fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) fail_write(path, errno);
  }

  FdCloser closer(fd);
  int err = 0;
  try {
    produce([fd](std::string_view bytes) {
      if (int e = write_all(fd, bytes)) throw WriteFailed{e};
    });
  } catch (const WriteFailed& f) {
    err = f.err;
  } catch (...) {
    // The producer failed: drop the temporary (an unnamed one goes with its descriptor).
    closer.close_now();
    if (!unnamed) ::unlink(temp.c_str());
    throw;
  }
  if (err == 0 && durable && ::fsync(fd) != 0) err = errno;
  // An unnamed file gets its temporary name only once it is whole; the rename then replaces
  // `path` atomically, as for a named temporary.
  if (err == 0 && unnamed) {
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) != 0)
      err = errno;
  }
  const int close_err = closer.close_now();
  if (err == 0) err = close_err;
  if (err == 0 && ::rename(temp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(temp.c_str());
    fail_write(path, err);
  }
  if (durable) sync_directory_of(path);
}

}  // namespace

void write_file_atomically_streamed(const std::string& path, const ProduceBytes& produce) {
  write_via_rename(path, produce, true);
}

void write_file_replacing_streamed(const std::string& path, const ProduceBytes& produce) {
  write_via_rename(path, produce, false);
}

void write_file_atomically(const std::string& path, std::string_view data) {
  write_file_atomically_streamed(path, [data](const WriteBytes& write) { write(data); });
}

void write_file_replacing(const std::string& path, std::string_view data) {
  write_file_replacing_streamed(path, [data](const WriteBytes& write) { write(data); });
}

}  // namespace fuserc
