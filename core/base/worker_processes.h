// Owns running independent tasks in forked worker processes: each worker takes the next task
// from a counter in shared memory, runs it and sends its result (bytes) back through its own
// pipe; the calling process receives the results as they come. For work that does not scale
// over threads of one process (NVRTC serialises part of concurrent compilations).
//
// The workers are forked from the caller: `work` runs in a copy of it and must not use stdio,
// locks other threads may hold, or anything else that is unsafe after fork in a process with
// threads. A worker ends with _exit, so nothing of the caller's is flushed or destroyed twice.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace fuserc {

struct WorkerRun {
  bool started = false;        // false: no worker could be forked (nothing ran)
  std::vector<bool> finished;  // per task: its result arrived
  std::string problem;         // why a task has no result (a worker died), "" if none
};

// Runs tasks 0..count-1 on up to `workers` processes. `work(i)` runs in a worker; `done(i,
// result)` runs in the caller, once per finished task, in the order results arrive.
WorkerRun run_in_worker_processes(size_t count, int workers,
                                  const std::function<std::string(size_t)>& work,
                                  const std::function<void(size_t, std::string&&)>& done);

}  // namespace fuserc
