#include "core/base/worker_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace fuserc {
namespace {

using Counter = std::atomic<uint64_t>;
static_assert(Counter::is_always_lock_free, "the shared task counter must be lock-free");

constexpr size_t kFrameHeader = 16;  // task index, result size (little-endian u64s)

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void put_u64(char* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t get_u64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

[[noreturn]] void worker_main(Counter& next, size_t count, int fd,
                              const std::function<std::string(size_t)>& work) {
  try {
    for (uint64_t i = next++; i < count; i = next++) {
      std::string result = work(static_cast<size_t>(i));
      char header[kFrameHeader];
      put_u64(header, i);
      put_u64(header + 8, result.size());
      if (!write_all(fd, header, sizeof header) || !write_all(fd, result.data(), result.size()))
        ::_exit(2);
    }
  } catch (...) {
    ::_exit(3);
  }
  ::_exit(0);
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
};

// Hands every complete frame in `w.buffer` to `done`.
void take_frames(Worker& w, size_t count, WorkerRun& run,
                 const std::function<void(size_t, std::string&&)>& done) {
  size_t at = 0;
  while (w.buffer.size() - at >= kFrameHeader) {
    const uint64_t index = get_u64(w.buffer.data() + at);
    const uint64_t size = get_u64(w.buffer.data() + at + 8);
    if (w.buffer.size() - at - kFrameHeader < size) break;
    std::string result = w.buffer.substr(at + kFrameHeader, size);
    at += kFrameHeader + size;
    if (index < count && !run.finished[index]) {
      run.finished[index] = true;
      done(static_cast<size_t>(index), std::move(result));
    }
  }
  w.buffer.erase(0, at);
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

int threads_in_this_process() {
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return 0;
  int n = 0;
  while (const dirent* e = ::readdir(dir))
    if (e->d_name[0] != '.') ++n;
  ::closedir(dir);
  return n;
}

WorkerRun run_in_worker_processes(size_t count, int workers,
                                  const std::function<std::string(size_t)>& work,
                                  const std::function<void(size_t, std::string&&)>& done,
                                  const std::function<void()>& waiting) {
  WorkerRun run;
  run.finished.assign(count, false);
  if (count == 0 || workers < 1) return run;
  if (threads_in_this_process() > 1) return run;  // not safe to fork (see the header)
  void* shared =
      ::mmap(nullptr, sizeof(Counter), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return run;
  Counter* next = new (shared) Counter(0);

  std::vector<Worker> pool;
  for (int k = 0; k < workers && static_cast<size_t>(k) < count; ++k) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) break;
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(p[0]);
      ::close(p[1]);
      break;
    }
    if (pid == 0) {
      ::close(p[0]);
      for (const Worker& w : pool) ::close(w.fd);
      worker_main(*next, count, p[1], work);
    }
    ::close(p[1]);
    pool.push_back({pid, p[0], {}});
  }
  run.started = !pool.empty();

  // Collect until every worker has closed its pipe.
  using Clock = std::chrono::steady_clock;
  const auto period = std::chrono::milliseconds(kWaitingPeriodMs);
  Clock::time_point next_wait = Clock::now() + period;
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    for (const Worker& w : pool)
      if (w.fd >= 0) fds.push_back({w.fd, POLLIN, 0});
    if (fds.empty()) break;
    int timeout = -1;
    if (waiting) {
      const Clock::time_point now = Clock::now();
      if (now >= next_wait) {
        waiting();
        next_wait = now + period;
      }
      timeout = static_cast<int>(
          std::chrono::ceil<std::chrono::milliseconds>(next_wait - Clock::now()).count());
      timeout = std::max(0, timeout);
    }
    const int ready_count = ::poll(fds.data(), fds.size(), timeout);
    if (ready_count < 0) {
      if (errno == EINTR) continue;
      run.problem = std::string("poll failed: ") + std::strerror(errno);
      break;
    }
    if (ready_count == 0) continue;  // time to call `waiting`
    for (const pollfd& ready : fds) {
      if (ready.revents == 0) continue;
      Worker& w = *std::find_if(pool.begin(), pool.end(),
                                [&](const Worker& x) { return x.fd == ready.fd; });
      char chunk[1 << 16];
      ssize_t n = ::read(w.fd, chunk, sizeof chunk);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        ::close(w.fd);
        w.fd = -1;
        continue;
      }
      w.buffer.append(chunk, static_cast<size_t>(n));
      take_frames(w, count, run, done);
    }
  }
  for (Worker& w : pool) {
    if (w.fd >= 0) {
      ::kill(w.pid, SIGKILL);
      ::close(w.fd);
    }
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && run.problem.empty())
      run.problem = "a worker process ended abnormally (" + describe_exit(status) + ")";
  }
  next->~Counter();
  ::munmap(shared, sizeof(Counter));
  return run;
}

}  // namespace fuserc
