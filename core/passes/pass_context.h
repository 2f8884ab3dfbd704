// Owns what every stage of the pipeline shares for diagnostics: which stages to dump
// (--dump-after=NAME), and a table of where compile time goes (--time-passes).
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <set>
#include <string>
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

  // "stage  time  share" table, in first-run order, with a total.
  std::string timing_table() const;
  const std::vector<std::pair<std::string, double>>& timings() const { return timings_; }

 private:
  std::vector<std::pair<std::string, double>> timings_;
};

}  // namespace fuserc
