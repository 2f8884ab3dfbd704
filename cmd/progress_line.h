// Owns the one updating status line `fuserc compile` shows on a terminal while NVRTC works:
// "fuserc: NVRTC: kernel 3 of 12, 1.4 s", redrawn in place (carriage return) as kernels finish
// and every quarter second for the elapsed time, erased when done. Nothing is drawn when
// standard error is not a terminal or when disabled (--quiet).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace fuserc::cmd {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ~ProgressLine();  // erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `done` of `total` kernels compiled. Thread-safe. The first call starts the clock.
  void update(size_t done, size_t total);

 private:
  void draw();  // with mutex_ held
  void tick();

  bool enabled_;
  bool started_ = false;
  bool stop_ = false;
  size_t done_ = 0, total_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
};

}  // namespace fuserc::cmd
