#include "cmd/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace fuserc::cmd {

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() {
  if (enabled_ && started_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

void ProgressLine::update(size_t done, size_t total) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = done;
  total_ = total;
  if (!started_) {
    started_ = true;
    start_ = std::chrono::steady_clock::now();
  }
  draw();
}

void ProgressLine::draw() {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // The kernel being worked on: one past those done, until all are.
  const size_t current = std::min(done_ + 1, total_);
  std::fprintf(stderr, "\r\033[Kfuserc: NVRTC: kernel %zu of %zu, %.1f s", current, total_,
               seconds);
  std::fflush(stderr);
}

void ProgressLine::tick() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (started_) draw();
}

}  // namespace fuserc::cmd
