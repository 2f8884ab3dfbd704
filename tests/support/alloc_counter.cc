#include "alloc_counter.h"

#include <cstdlib>
#include <new>

// Every replaceable form of operator new and delete is replaced, so that allocation and
// release always pair up here (malloc/free): under AddressSanitizer a form left out (say the
// nothrow new that Catch2 uses) would come from the sanitizer's allocator and be released by
// the free() below, an alloc-dealloc mismatch. Every form of new counts.
namespace {
thread_local bool t_counting = false;
thread_local int64_t t_count = 0;

void* counted_or_null(std::size_t n) noexcept {
  if (t_counting) ++t_count;
  return std::malloc(n ? n : 1);
}

void* counted(std::size_t n) {
  if (void* p = counted_or_null(n)) return p;
  throw std::bad_alloc();
}

void* counted_aligned_or_null(std::size_t n, std::align_val_t al) noexcept {
  if (t_counting) ++t_count;
  const auto a = static_cast<std::size_t>(al);
  const std::size_t size = n ? (n + a - 1) / a * a : a;  // aligned_alloc: a multiple of a
  return std::aligned_alloc(a, size);
}

void* counted_aligned(std::size_t n, std::align_val_t al) {
  if (void* p = counted_aligned_or_null(n, al)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) {
  return counted(n);
}
void* operator new[](std::size_t n) {
  return counted(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return counted_or_null(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return counted_or_null(n);
}
void* operator new(std::size_t n, std::align_val_t al) {
  return counted_aligned(n, al);
}
void* operator new[](std::size_t n, std::align_val_t al) {
  return counted_aligned(n, al);
}
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return counted_aligned_or_null(n, al);
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return counted_aligned_or_null(n, al);
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
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
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
