// Owns counting heap allocations in a test: the program's operator new, every form (plain, array,
// nothrow, aligned) with its operator delete, is replaced (in alloc_counter.cc) by one that
// counts the calls made by a thread while a HeapCounter of that thread is alive. Used to prove
// that a hot path allocates nothing.
#pragma once

#include <cstdint>

namespace fuserc::testing {

class HeapCounter {
 public:
  HeapCounter();
  ~HeapCounter();
  HeapCounter(const HeapCounter&) = delete;
  HeapCounter& operator=(const HeapCounter&) = delete;
  int64_t allocations() const;  // operator new calls on this thread since construction
};

// Stops counting on this thread for its lifetime (test machinery such as the fake driver).
class HeapCountPause {
 public:
  HeapCountPause();
  ~HeapCountPause();
  HeapCountPause(const HeapCountPause&) = delete;
  HeapCountPause& operator=(const HeapCountPause&) = delete;

 private:
  bool was_counting_;
};

}  // namespace fuserc::testing
