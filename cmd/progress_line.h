// Owns the one updating status line `fuserc compile` shows on a terminal while NVRTC works:
// "fuserc: NVRTC: kernel 3 of 12, 1.4 s", redrawn in place (carriage return) as kernels finish
// and on each tick() for the elapsed time, erased when done. Nothing is drawn when standard
// error is not a terminal or when disabled (--quiet). It has no thread of its own: the ticks
// come from the compiler's wait for its worker processes, which are only forked while fuserc
// has a single thread (core/base/worker_processes.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>

namespace fuserc::cmd {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ~ProgressLine();  // erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `done` of `total` kernels compiled. Thread-safe. The first call starts the clock.
  void update(size_t done, size_t total);
  // Redraws the line with the time elapsed (nothing before the first update). Thread-safe.
  void tick();

 private:
  void draw();  // with mutex_ held

  bool enabled_;
  bool started_ = false;
  size_t done_ = 0, total_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
};

}  // namespace fuserc::cmd
