// Owns running independent tasks in forked worker processes: each worker takes the next task
// from a counter in shared memory, runs it and sends its result (bytes) back through its own
// pipe; the calling process receives the results as they come. For work that does not scale
// over threads of one process (NVRTC serialises part of concurrent compilations).
//
// The workers are forked from the caller, and only from a caller with one thread: a lock that
// another thread holds at the fork stays locked forever in the copy. GCC's AddressSanitizer has
// no fork handler for its allocator, so a thread merely starting (or allocating) at that moment
// left workers waiting for ever on its allocator lock (the sanitized CI run hung on a progress
// line's timer thread). With other threads running, nothing is forked (`started` false: the
// caller runs the tasks its own way). `work` runs in the copy; a worker ends with _exit, so
// nothing of the caller's is flushed or destroyed twice.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace fuserc {

struct WorkerRun {
  bool started = false;        // false: nothing ran (no worker could be forked, or the caller
                               // has other threads)
  std::vector<bool> finished;  // per task: its result arrived
  std::string problem;         // why a task has no result (a worker died), "" if none
};

// Runs tasks 0..count-1 on up to `workers` processes. `work(i)` runs in a worker; `done(i,
// result)` runs in the caller, once per finished task, in the order results arrive; `waiting`
// (optional) runs in the caller about every `kWaitingPeriodMs` while it waits for results (a
// progress display's clock, which therefore needs no thread of its own).
constexpr int kWaitingPeriodMs = 250;
WorkerRun run_in_worker_processes(size_t count, int workers,
                                  const std::function<std::string(size_t)>& work,
                                  const std::function<void(size_t, std::string&&)>& done,
                                  const std::function<void()>& waiting = {});

// The number of threads of this process (from /proc/self/task), or 0 when it cannot be read.
int threads_in_this_process();

}  // namespace fuserc
