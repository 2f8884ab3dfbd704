// Owns what the fuzz targets share: a small reader that turns the fuzzer's bytes into numbers
// (for shapes and symbol values), and the rule that a UserError is a correct answer to bad
// input while anything else (an InternalError, a crash, a sanitizer report) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace fuserc_fuzz {

// The targets' bodies, also run by tests/fuzz_replay on every saved finding (tests/fuzz/TARGET/)
// so that each stays fixed in the normal build: 0, or an abort / uncaught exception.
int fuzz_graph(const uint8_t* data, size_t size);
int fuzz_safetensors(const uint8_t* data, size_t size);
int fuzz_expr(const uint8_t* data, size_t size);
int fuzz_package(const uint8_t* data, size_t size);
int fuzz_c_api(const uint8_t* data, size_t size);

// A finding that is not a crash by itself (a wrong answer): say what, then abort so that
// libFuzzer saves the input.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what);
  std::abort();
}

// Consumes bytes from the end of the input, so that the front stays the structured part.
class ByteTail {
 public:
  ByteTail(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t take(size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && size_ > 0; ++i) v = (v << 8) | data_[--size_];
    return v;
  }
  // A value near the small end of interesting sizes, with occasional extremes.
  int64_t size_value() {
    uint8_t kind = static_cast<uint8_t>(take(1));
    switch (kind % 8) {
      case 0: return static_cast<int64_t>(take(8));  // anything, negative included
      case 1: return -static_cast<int64_t>(take(1));
      default: return static_cast<int64_t>(take(kind % 8 == 7 ? 4 : 1));
    }
  }
  size_t remaining() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace fuserc_fuzz
