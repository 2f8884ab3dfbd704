// Tests of running tasks in forked worker processes (core/base/worker_processes.h): every
// result arrives once, large results cross the pipes whole, the work really runs in other
// processes, a worker that dies is reported with the tasks it left unfinished, the caller is told
// while it waits, and a process with other threads forks nothing.
#include <signal.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <future>
#include <set>
#include <string>
#include <thread>

#include "core/base/worker_processes.h"

using namespace fuserc;

TEST_CASE("worker processes: every task's result arrives once", "[workers]") {
  const size_t count = 40;
  std::vector<std::string> results(count);
  std::set<std::string> pids;
  size_t calls = 0;
  WorkerRun run = run_in_worker_processes(
      count, 3,
      [](size_t i) {
        // Large enough to need many pipe reads; the pid shows where it ran.
        return std::to_string(::getpid()) + ":" + std::string(100000 + i, char('a' + i % 26));
      },
      [&](size_t i, std::string&& r) {
        ++calls;
        pids.insert(r.substr(0, r.find(':')));
        results[i] = r.substr(r.find(':') + 1);
      });
  REQUIRE(run.started);
  CHECK(run.problem.empty());
  CHECK(calls == count);
  for (size_t i = 0; i < count; ++i) {
    CHECK(run.finished[i]);
    CHECK(results[i] == std::string(100000 + i, char('a' + i % 26)));
  }
  CHECK(pids.count(std::to_string(::getpid())) == 0);  // none ran in this process
  CHECK(pids.size() >= 1);
  CHECK(pids.size() <= 3);
}

TEST_CASE("worker processes: a worker that dies is reported", "[workers]") {
  size_t calls = 0;
  WorkerRun run = run_in_worker_processes(
      6, 2,
      [](size_t i) {
        if (i == 3) ::kill(::getpid(), SIGKILL);
        return std::string("ok");
      },
      [&](size_t, std::string&&) { ++calls; });
  REQUIRE(run.started);
  CHECK_FALSE(run.finished[3]);
  CHECK(calls < 6);
  CHECK(run.problem.find("killed by signal 9") != std::string::npos);
}

TEST_CASE("worker processes: nothing to do", "[workers]") {
  WorkerRun run = run_in_worker_processes(
      0, 2, [](size_t) { return std::string(); }, [](size_t, std::string&&) {});
  CHECK_FALSE(run.started);
  CHECK(run.finished.empty());
}

TEST_CASE("worker processes: the caller is told about every period while it waits",
          "[workers]") {
  size_t waits = 0;
  WorkerRun run = run_in_worker_processes(
      1, 1,
      [](size_t) {
        ::usleep(6 * kWaitingPeriodMs * 1000);
        return std::string("slept");
      },
      [](size_t, std::string&&) {}, [&] { ++waits; });
  REQUIRE(run.started);
  CHECK(run.finished[0]);
  CHECK(waits >= 3);  // about 6; fewer only on a machine that starves this process
  CHECK(waits <= 7);
}

TEST_CASE("worker processes: a process with other threads forks nothing", "[workers]") {
  // A lock another thread holds at the fork stays locked in the copy (GCC's ASan allocator
  // has no fork handler): with a second thread alive, nothing runs and the caller falls back.
  CHECK(threads_in_this_process() == 1);
  std::promise<void> release;
  std::thread other([f = release.get_future()]() mutable { f.wait(); });
  CHECK(threads_in_this_process() == 2);
  size_t calls = 0;
  WorkerRun run = run_in_worker_processes(
      3, 2, [](size_t) { return std::string("ran"); },
      [&](size_t, std::string&&) { ++calls; });
  release.set_value();
  other.join();
  CHECK_FALSE(run.started);
  CHECK(calls == 0);
  CHECK(threads_in_this_process() == 1);
  // ...and with the thread gone, workers run again.
  run = run_in_worker_processes(
      3, 2, [](size_t) { return std::string("ran"); },
      [&](size_t, std::string&&) { ++calls; });
  CHECK(run.started);
  CHECK(calls == 3);
}
