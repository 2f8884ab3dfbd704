// Owns what every stage of the pipeline shares for diagnostics: which stages to dump
// (--dump-after=NAME), and a table of where compile time goes (--time-passes).
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fuserc {

class PassContext {
 public:
  std::set<std::string> dump_after;  // stage names; "all" dumps after every stage
  bool time_passes = false;
  std::ostream* dump_out = nullptr;  // defaults to std::cerr

  bool should_dump(const std::string& stage) const {
    return dump_after.count(stage) || dump_after.count("all");
  }
  // Prints "=== after STAGE ===" and the text (when asked to dump this stage).
  void dump(const std::string& stage, const std::function<std::string()>& text) const;

  // Runs f, recording its wall time under `stage`.
  template <class F>
  auto timed(const std::string& stage, F&& f) -> decltype(f()) {
    auto start = std::chrono::steady_clock::now();
    struct Record {
      PassContext* ctx;
      std::string stage;
      std::chrono::steady_clock::time_point start;
      ~Record() {
        double us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count();
        ctx->record(stage, us);
      }
    } rec{this, stage, start};
    return f();
  }
  void record(const std::string& stage, double microseconds);

  // Runs f, recording its wall time as step `step` of stage `stage` (a row under the stage's
  // row in the table, not added to the total: the stage's own time includes it).
  template <class F>
  auto timed_step(const std::string& stage, const std::string& step, F&& f) -> decltype(f()) {
    auto start = std::chrono::steady_clock::now();
    struct Record {
      PassContext* ctx;
      const std::string& stage;
      const std::string& step;
      std::chrono::steady_clock::time_point start;
      ~Record() {
        ctx->record_step(
            stage, step,
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count());
      }
    } rec{this, stage, step, start};
    return f();
  }
  void record_step(const std::string& stage, const std::string& step, double microseconds);

  // "stage  time  share" table, in first-run order, with a total; each stage's steps indented
  // under it.
  std::string timing_table() const;
  const std::vector<std::pair<std::string, double>>& timings() const { return timings_; }

 private:
  std::vector<std::pair<std::string, double>> timings_;
  struct Step {
    std::string stage, step;
    double microseconds;
  };
  std::vector<Step> steps_;
};

// ctx->timed_step(stage, step, f) when there is a context, else f().
template <class F>
auto timed_step(PassContext* ctx, const std::string& stage, const std::string& step, F&& f)
    -> decltype(f()) {
  if (!ctx) return f();
  return ctx->timed_step(stage, step, std::forward<F>(f));
}

}  // namespace fuserc
