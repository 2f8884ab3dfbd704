#include "alloc_counter.h"

#include <cstdlib>
#include <new>

namespace {
thread_local bool t_counting = false;
thread_local int64_t t_count = 0;

void* counted(std::size_t n) {
  if (t_counting) ++t_count;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) {
  return counted(n);
}
void* operator new[](std::size_t n) {
  return counted(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace fuserc::testing {

HeapCounter::HeapCounter() {
  t_count = 0;
  t_counting = true;
}
HeapCounter::~HeapCounter() {
  t_counting = false;
}
int64_t HeapCounter::allocations() const {
  return t_count;
}

HeapCountPause::HeapCountPause() : was_counting_(t_counting) {
  t_counting = false;
}
HeapCountPause::~HeapCountPause() {
  t_counting = was_counting_;
}

}  // namespace fuserc::testing
