// Owns advisory whole-file locks (flock) between processes: the compile cache uses one to let a
// single process at a time evict entries or update the shared counters. The lock is released
// when the object is destroyed (or the process dies, which is why flock and not a lock file).
#pragma once

#include <string>

namespace fuserc {

class FileLock {
 public:
  enum class Mode { Wait, TryOnce };

  // Opens (creating it if missing) and locks `path` exclusively. With TryOnce, locked() is false
  // when another process holds the lock. A file that cannot be opened leaves locked() false.
  FileLock(const std::string& path, Mode mode);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  bool locked() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace fuserc
