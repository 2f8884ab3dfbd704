#include "core/base/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

namespace fuserc {

FileLock::FileLock(const std::string& path, Mode mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return;
  const int op = LOCK_EX | (mode == Mode::TryOnce ? LOCK_NB : 0);
  int r;
  do {
    r = ::flock(fd, op);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    ::close(fd);
    return;
  }
  fd_ = fd;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
}

}  // namespace fuserc
