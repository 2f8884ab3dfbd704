// The CUDA emulation prelude: force-included (g++ -include) before a package's CUDA source text,
// which is then compiled, unchanged, by the host C++ compiler into a shared object that
// EmulatedModule loads (runtime/emulator/emulated_module.h). Owns everything CUDA provides to
// device code that fuserc's kernels use, with CUDA's semantics:
//   - the keywords (__global__, __shared__, __launch_bounds__, __align__, ...);
//   - the built-in variables threadIdx, blockIdx, blockDim, gridDim, warpSize;
//   - vector types, __half and __nv_bfloat16 with conversions bit-exact with CUDA's;
//   - math functions, bit casts, saturating conversions, integer intrinsics, atomics, printf;
//   - the execution engine: launch(), which runs the blocks of a grid on a pool of host
//     threads and the CUDA threads of each block as cooperatively scheduled fibers, with
//     __syncthreads, __syncwarp and the warp shuffles / votes as scheduling points.
//
// Self-contained C++17 (no fuserc headers): it is embedded in the fuserc binary and compiled at
// run time. Neither __CUDACC__ nor __CUDA_ARCH__ is defined (code shared with the host, like
// philox_impl.h, takes its host path); FUSERC_EMULATION is.
//
// Memory model of the emulation:
//   - global memory is host memory; blocks run concurrently on different host threads, so
//     atomics are real (__atomic builtins, sequentially consistent);
//   - __shared__ variables are thread_local (block-scope thread_local is implicitly static): one
//     copy per host thread, and a host thread runs its blocks one after another, so each block
//     sees its own. Like CUDA, shared memory is not cleared between blocks; dynamic shared memory
//     (the one `extern __shared__ ... fz_smem[]`) is filled with 0xCD bytes when a launch starts;
//   - the threads of a block run one at a time on one host thread (no data races within a
//     block); a thread runs until it returns or reaches a barrier.
#ifndef FUSERC_RUNTIME_EMULATOR_CUDA_EMULATION_H_
#define FUSERC_RUNTIME_EMULATOR_CUDA_EMULATION_H_

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "cuda_emulation.h needs C++17"
#endif
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#error "cuda_emulation.h is the CPU emulation of CUDA; it is not for CUDA compilers"
#endif

#define FUSERC_EMULATION 1

#include <math.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

// ==== Keywords ==================================================================================

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ thread_local
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __CUDA_ALIGN__(n) __attribute__((aligned(n)))
// __restrict__ is a g++ keyword already.

// ==== Vector types and dim3 =====================================================================

#define FUSERC_EMU_VEC2(T, name, align)         \
  struct __attribute__((aligned(align))) name { \
    T x, y;                                     \
  };                                            \
  inline name make_##name(T x, T y) {           \
    name v;                                     \
    v.x = x;                                    \
    v.y = y;                                    \
    return v;                                   \
  }
#define FUSERC_EMU_VEC3(T, name)           \
  struct name {                            \
    T x, y, z;                             \
  };                                       \
  inline name make_##name(T x, T y, T z) { \
    name v;                                \
    v.x = x;                               \
    v.y = y;                               \
    v.z = z;                               \
    return v;                              \
  }
#define FUSERC_EMU_VEC4(T, name, align)         \
  struct __attribute__((aligned(align))) name { \
    T x, y, z, w;                               \
  };                                            \
  inline name make_##name(T x, T y, T z, T w) { \
    name v;                                     \
    v.x = x;                                    \
    v.y = y;                                    \
    v.z = z;                                    \
    v.w = w;                                    \
    return v;                                   \
  }

FUSERC_EMU_VEC2(signed char, char2, 2)
FUSERC_EMU_VEC3(signed char, char3)
FUSERC_EMU_VEC4(signed char, char4, 4)
FUSERC_EMU_VEC2(unsigned char, uchar2, 2)
FUSERC_EMU_VEC3(unsigned char, uchar3)
FUSERC_EMU_VEC4(unsigned char, uchar4, 4)
FUSERC_EMU_VEC2(short, short2, 4)
FUSERC_EMU_VEC3(short, short3)
FUSERC_EMU_VEC4(short, short4, 8)
FUSERC_EMU_VEC2(unsigned short, ushort2, 4)
FUSERC_EMU_VEC3(unsigned short, ushort3)
FUSERC_EMU_VEC4(unsigned short, ushort4, 8)
FUSERC_EMU_VEC2(int, int2, 8)
FUSERC_EMU_VEC3(int, int3)
FUSERC_EMU_VEC4(int, int4, 16)
FUSERC_EMU_VEC2(unsigned int, uint2, 8)
FUSERC_EMU_VEC3(unsigned int, uint3)
FUSERC_EMU_VEC4(unsigned int, uint4, 16)
FUSERC_EMU_VEC2(long long, longlong2, 16)
FUSERC_EMU_VEC3(long long, longlong3)
FUSERC_EMU_VEC4(long long, longlong4, 16)
FUSERC_EMU_VEC2(unsigned long long, ulonglong2, 16)
FUSERC_EMU_VEC3(unsigned long long, ulonglong3)
FUSERC_EMU_VEC4(unsigned long long, ulonglong4, 16)
FUSERC_EMU_VEC2(float, float2, 8)
FUSERC_EMU_VEC3(float, float3)
FUSERC_EMU_VEC4(float, float4, 16)
FUSERC_EMU_VEC2(double, double2, 16)
FUSERC_EMU_VEC3(double, double3)
FUSERC_EMU_VEC4(double, double4, 16)

#undef FUSERC_EMU_VEC2
#undef FUSERC_EMU_VEC3
#undef FUSERC_EMU_VEC4

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

constexpr int warpSize = 32;

// ==== Execution engine: state =================================================================

namespace fuserc_emu {

// The launch parameters, as EmulatedModule passes them (mirrored in emulated_module.cc).
struct LaunchConfig {
  unsigned int struct_size;  // sizeof(LaunchConfig), checked
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int host_threads;  // 0: one per online CPU
  unsigned long long dynamic_smem_bytes;
  unsigned long long stack_bytes;  // per CUDA thread; 0: kDefaultStackBytes
};

constexpr unsigned long long kMaxDynamicSmemBytes = 232448;  // 227 KiB, sm_90's opt-in limit
constexpr unsigned long long kDefaultStackBytes = 256 * 1024;
constexpr unsigned long long kGarbage64 = 0xCDCDCDCDCDCDCDCDull;

// What a CUDA thread of the current block is doing.
enum ThreadState : unsigned char { kUnstarted, kRunning, kReady, kWaitBlock, kWaitWarp, kDone };

// A saved execution context. On x86-64 a switch saves and restores only what the ABI asks a
// callee to preserve (a few nanoseconds); elsewhere, or with FUSERC_EMU_USE_UCONTEXT defined,
// it is swapcontext (which also makes a sigprocmask system call, a few hundred nanoseconds).
#if defined(__x86_64__) && !defined(FUSERC_EMU_USE_UCONTEXT)
#define FUSERC_EMU_FAST_SWITCH 1
struct Context {
  void* sp;
};
// Saves rbp, rbx, r12-r15, MXCSR and the x87 control word on the current stack, stores the
// stack pointer in *save, and resumes the context whose stack pointer is `to`.
extern "C" void fuserc_emu_switch(void** save, void* to);
__asm__(
    ".pushsection .text\n"
    ".globl fuserc_emu_switch\n"
    ".hidden fuserc_emu_switch\n"
    ".type fuserc_emu_switch, @function\n"
    "fuserc_emu_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  subq $8, %rsp\n"
    "  stmxcsr (%rsp)\n"
    "  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n"
    "  fldcw 4(%rsp)\n"
    "  addq $8, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size fuserc_emu_switch, .-fuserc_emu_switch\n"
    ".popsection\n");

inline void context_switch(Context* save, Context* to) { fuserc_emu_switch(&save->sp, to->sp); }

// A context that starts `entry` (which must never return) on the stack [base, base + size).
inline void context_init(Context* c, unsigned char* base, size_t size, void (*entry)()) {
  unsigned long long* top = reinterpret_cast<unsigned long long*>(
      reinterpret_cast<uintptr_t>(base + size) & ~static_cast<uintptr_t>(15));
  unsigned int mxcsr;
  unsigned short fpucw;
  __asm__ __volatile__("stmxcsr %0" : "=m"(mxcsr));
  __asm__ __volatile__("fnstcw %0" : "=m"(fpucw));
  top[-1] = 0;                                    // entry's (never used) return address
  top[-2] = reinterpret_cast<uintptr_t>(entry);  // where the first switch "returns" to
  for (int i = 3; i <= 8; ++i) top[-i] = 0;      // rbp, rbx, r12-r15
  top[-9] = static_cast<unsigned long long>(mxcsr) | static_cast<unsigned long long>(fpucw) << 32;
  c->sp = top - 9;
}
#else
struct Context {
  ucontext_t uc;
};
inline void context_switch(Context* save, Context* to) { swapcontext(&save->uc, &to->uc); }
inline void context_init(Context* c, unsigned char* base, size_t size, void (*entry)()) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = base;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = nullptr;
  makecontext(&c->uc, entry, 0);
}
#endif

// An execution context with its own stack, reused for one CUDA thread after another.
struct Fiber {
  Context ctx;
  unsigned char* mapping;  // guard page + stack
  size_t mapping_size;
  unsigned int tid;  // linear thread id within the block
  uint3 idx;
};

// One warp of the current block: which lanes still run, which wait at a warp barrier (and for
// which lanes), and the exchange slots of the shuffles and votes.
struct Warp {
  unsigned int live;
  unsigned int arrived;
  unsigned int need[32];
  unsigned long long slot[32];
};

// What every host thread of a launch shares.
struct Launch {
  const LaunchConfig* config;
  void (*body)(void*);  // runs one CUDA thread
  void* body_arg;
  unsigned long long num_blocks;
  unsigned long long next_block;  // atomic
  size_t stack_bytes;
  int failed;  // atomic
  pthread_mutex_t error_mutex;
  char error[1024];
};

// One host thread of a launch: runs blocks one after another, the CUDA threads of a block as
// fibers.
struct Worker {
  Launch* launch;
  Context main_ctx;
  // The current block.
  unsigned int nthreads;
  unsigned int next_unstarted;
  unsigned int live;  // threads that have not returned
  unsigned char* state;
  Fiber** fiber_of;
  unsigned int* ready;  // ring buffer of thread ids
  unsigned int ready_head, ready_count;
  unsigned int* bar_waiters;
  unsigned int bar_nwaiters;
  unsigned int bar_arrived;
  unsigned int bar_gen;
  int bar_acc;
  int bar_result[2];
  unsigned int bar_participants[2];
  Warp* warps;
  unsigned int nwarps;
  // Fibers: all those created (owned), and those parked between threads.
  Fiber** fibers;
  unsigned int nfibers;
  Fiber** idle;
  unsigned int nidle;
  Fiber* current;
  bool aborted;
};

// Per host thread: the built-in variables of the running CUDA thread, and its worker.
struct ThreadContext {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
  Worker* worker;
};

static thread_local ThreadContext g_ctx{};

}  // namespace fuserc_emu

// Dynamic shared memory: what a kernel's `extern __shared__ __align__(16) unsigned char
// fz_smem[];` refers to.
__attribute__((aligned(16))) static thread_local unsigned char
    fz_smem[fuserc_emu::kMaxDynamicSmemBytes];

#define threadIdx (static_cast<const uint3&>(::fuserc_emu::g_ctx.thread_idx))
#define blockIdx (static_cast<const uint3&>(::fuserc_emu::g_ctx.block_idx))
#define blockDim (static_cast<const dim3&>(::fuserc_emu::g_ctx.block_dim))
#define gridDim (static_cast<const dim3&>(::fuserc_emu::g_ctx.grid_dim))

// ==== Execution engine: scheduling ============================================================

namespace fuserc_emu {

inline void record_error(Launch* launch, const char* message) {
  pthread_mutex_lock(&launch->error_mutex);
  if (!launch->failed) {
    std::snprintf(launch->error, sizeof launch->error, "%s", message);
    __atomic_store_n(&launch->failed, 1, __ATOMIC_SEQ_CST);
  }
  pthread_mutex_unlock(&launch->error_mutex);
}

inline uint3 thread_index(const dim3& block, unsigned int tid) {
  return uint3{tid % block.x, (tid / block.x) % block.y, tid / (block.x * block.y)};
}

inline void fiber_entry();

inline Fiber* new_fiber(Worker* w) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t stack = (w->launch->stack_bytes + page - 1) / page * page;
  const size_t size = stack + page;
  void* m = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  mprotect(m, page, PROT_NONE);  // overflowing the stack faults instead of corrupting memory
  Fiber* f = new (std::nothrow) Fiber;
  if (f == nullptr) {
    munmap(m, size);
    return nullptr;
  }
  f->mapping = static_cast<unsigned char*>(m);
  f->mapping_size = size;
  context_init(&f->ctx, f->mapping + page, stack, fiber_entry);
  w->fibers[w->nfibers++] = f;
  return f;
}

inline void assign(Worker* w, Fiber* f, unsigned int tid) {
  f->tid = tid;
  f->idx = thread_index(g_ctx.block_dim, tid);
  w->fiber_of[tid] = f;
  w->state[tid] = kRunning;
}

inline void push_ready(Worker* w, unsigned int tid) {
  w->state[tid] = kReady;
  w->ready[(w->ready_head + w->ready_count) % w->nthreads] = tid;
  ++w->ready_count;
}

inline Fiber* pop_ready(Worker* w) {
  if (w->ready_count == 0) return nullptr;
  const unsigned int tid = w->ready[w->ready_head];
  w->ready_head = (w->ready_head + 1) % w->nthreads;
  --w->ready_count;
  w->state[tid] = kRunning;
  return w->fiber_of[tid];
}

// A fiber (parked or new) for the next thread not yet started; nullptr if there is none.
inline Fiber* start_unstarted(Worker* w) {
  if (w->next_unstarted >= w->nthreads) return nullptr;
  Fiber* f = w->nidle > 0 ? w->idle[--w->nidle] : new_fiber(w);
  if (f != nullptr) assign(w, f, w->next_unstarted++);
  return f;
}

// A fiber to run next: a released thread, else one for the next thread not yet started;
// nullptr when every live thread waits.
inline Fiber* next_runnable(Worker* w) {
  Fiber* f = pop_ready(w);
  return f != nullptr ? f : start_unstarted(w);
}

// Saves the running context into `save` and runs `to`.
inline void switch_to(Worker* w, Context* save, Fiber* to) {
  w->current = to;
  g_ctx.thread_idx = to->idx;
  context_switch(save, &to->ctx);
}

// Ends the block (and the launch) with an error; the fibers of the block are abandoned.
[[noreturn]] inline void abort_block(Worker* w, const char* what) {
  char message[768];
  const ThreadContext& c = g_ctx;
  std::snprintf(message, sizeof message, "fault: %s (block (%u,%u,%u), thread (%u,%u,%u))", what,
                c.block_idx.x, c.block_idx.y, c.block_idx.z, c.thread_idx.x, c.thread_idx.y,
                c.thread_idx.z);
  record_error(w->launch, message);
  w->aborted = true;
  Context dead;
  context_switch(&dead, &w->main_ctx);
  __builtin_unreachable();
}

[[noreturn]] inline void deadlock(Worker* w) {
  unsigned int at_block = 0, at_warp = 0;
  for (unsigned int t = 0; t < w->nthreads; ++t) {
    at_block += w->state[t] == kWaitBlock;
    at_warp += w->state[t] == kWaitWarp;
  }
  char what[256];
  std::snprintf(what, sizeof what,
                "deadlock: %u live threads, %u waiting at __syncthreads and %u at warp "
                "barriers (__syncwarp or a shuffle/vote), none can proceed",
                w->live, at_block, at_warp);
  abort_block(w, what);
}

// The running thread has been put in a wait state: run something else until it is released.
inline void wait_here(Worker* w) {
  Fiber* self = w->current;
  Fiber* next = next_runnable(w);
  if (next == nullptr) {
    if (w->next_unstarted < w->nthreads) abort_block(w, "out of memory for fiber stacks");
    deadlock(w);
  }
  switch_to(w, &self->ctx, next);
  __asm__ __volatile__("" ::: "memory");
}

inline void release_block_barrier(Worker* w) {
  const unsigned int parity = w->bar_gen & 1u;
  w->bar_result[parity] = w->bar_acc;
  w->bar_participants[parity] = w->bar_arrived;
  w->bar_acc = 0;
  w->bar_arrived = 0;
  ++w->bar_gen;
  for (unsigned int i = 0; i < w->bar_nwaiters; ++i) push_ready(w, w->bar_waiters[i]);
  w->bar_nwaiters = 0;
}

// Releases the lanes `lanes` (all waiting at a warp barrier) of warp `warp`, except `self`.
inline void release_warp(Worker* w, unsigned int warp, unsigned int lanes, unsigned int self) {
  w->warps[warp].arrived &= ~lanes;
  for (unsigned int lane = 0; lane < 32; ++lane) {
    const unsigned int tid = warp * 32 + lane;
    if ((lanes >> lane & 1u) && tid != self) push_ready(w, tid);
  }
}

// After a lane returned: releases the warp barriers it no longer holds up.
inline void recheck_warp(Worker* w, unsigned int warp) {
  Warp& ws = w->warps[warp];
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned int lane = 0; lane < 32 && !changed; ++lane) {
      if (!(ws.arrived >> lane & 1u)) continue;
      const unsigned int need = ws.need[lane] & ws.live;
      if ((ws.arrived & need) == need) {
        release_warp(w, warp, need | (1u << lane), UINT_MAX);
        changed = true;
      }
    }
  }
}

inline void thread_returned(Worker* w, unsigned int tid) {
  w->state[tid] = kDone;
  --w->live;
  Warp& ws = w->warps[tid / 32];
  ws.live &= ~(1u << (tid % 32));
  ws.slot[tid % 32] = kGarbage64;
  if (ws.arrived != 0) recheck_warp(w, tid / 32);
  // Exited threads do not count at __syncthreads (as on sm_70 and later).
  if (w->bar_arrived > 0 && w->bar_arrived == w->live) release_block_barrier(w);
}

// Every fiber runs this loop: run a CUDA thread; then take the next thread not yet started
// (without switching) or, if threads were released, park and switch to one of them.
inline void fiber_entry() {
  Worker* w = g_ctx.worker;
  Fiber* self = w->current;
  for (;;) {
    w->launch->body(w->launch->body_arg);
    thread_returned(w, self->tid);
    if (w->ready_count == 0 && w->next_unstarted < w->nthreads) {
      assign(w, self, w->next_unstarted++);
      g_ctx.thread_idx = self->idx;
      continue;
    }
    w->idle[w->nidle++] = self;
    Fiber* next = next_runnable(w);
    if (next != nullptr) {
      switch_to(w, &self->ctx, next);
    } else if (w->live == 0) {
      context_switch(&self->ctx, &w->main_ctx);  // the block is done
    } else {
      deadlock(w);
    }
    // Resumed with a new thread to run.
  }
}

// ---- Barriers ----

// __syncthreads and its counting variants: returns how many participants passed a non-zero
// `predicate`, and their number in *participants.
inline int block_barrier(int predicate, unsigned int* participants) {
  Worker* w = g_ctx.worker;
  __asm__ __volatile__("" ::: "memory");
  w->bar_acc += predicate != 0;
  const unsigned int parity = w->bar_gen & 1u;
  ++w->bar_arrived;
  if (w->bar_arrived == w->live) {
    release_block_barrier(w);
  } else {
    const unsigned int tid = w->current->tid;
    w->bar_waiters[w->bar_nwaiters++] = tid;
    w->state[tid] = kWaitBlock;
    wait_here(w);
  }
  __asm__ __volatile__("" ::: "memory");
  if (participants != nullptr) *participants = w->bar_participants[parity];
  return w->bar_result[parity];
}

// __syncwarp(mask): waits until every live lane of `mask` (and the caller) has arrived.
inline void warp_barrier(unsigned int mask) {
  Worker* w = g_ctx.worker;
  __asm__ __volatile__("" ::: "memory");
  const unsigned int tid = w->current->tid;
  const unsigned int lane = tid % 32, warp = tid / 32;
  Warp& ws = w->warps[warp];
  const unsigned int bit = 1u << lane;
  const unsigned int need = (mask | bit) & ws.live;
  ws.need[lane] = need;
  ws.arrived |= bit;
  if ((ws.arrived & need) == need) {
    release_warp(w, warp, need, tid);
  } else {
    w->state[tid] = kWaitWarp;
    wait_here(w);
  }
  __asm__ __volatile__("" ::: "memory");
}

// Lets the other threads of the block run (a spin-wait point): __nanosleep.
inline void yield_thread() {
  Worker* w = g_ctx.worker;
  Fiber* self = w->current;
  Fiber* next = pop_ready(w);
  if (next == nullptr) next = start_unstarted(w);
  if (next == nullptr) return;
  push_ready(w, self->tid);
  switch_to(w, &self->ctx, next);
  __asm__ __volatile__("" ::: "memory");
}

// The exchange of a shuffle or vote: publish `value`, wait for the warp, return the slots.
inline const unsigned long long* warp_exchange(unsigned int mask, unsigned long long value) {
  Worker* w = g_ctx.worker;
  const unsigned int tid = w->current->tid;
  Warp& ws = w->warps[tid / 32];
  ws.slot[tid % 32] = value;
  warp_barrier(mask);
  return ws.slot;
}

inline unsigned int warp_live_mask() {
  Worker* w = g_ctx.worker;
  return w->warps[w->current->tid / 32].live;
}

inline unsigned int lane_id() { return g_ctx.worker->current->tid % 32; }

// PTX shfl.sync: which lane a shuffle reads (`mode` 0 idx, 1 up, 2 down, 3 bfly) given b (lane,
// delta or mask) and c (clamp in bits 4:0, segment mask in bits 12:8).
inline unsigned int shfl_source(unsigned int lane, int mode, unsigned int b, unsigned int c) {
  const int ln = static_cast<int>(lane);
  const int bval = static_cast<int>(b & 31u);
  const int cval = static_cast<int>(c & 31u);
  const int segmask = static_cast<int>((c >> 8) & 31u);
  const int max_lane = (ln & segmask) | (cval & ~segmask);
  const int min_lane = ln & segmask;
  int j;
  bool ok;
  switch (mode) {
    case 0:
      j = min_lane | (bval & ~segmask);
      ok = j <= max_lane;
      break;
    case 1:
      j = ln - bval;
      ok = j >= max_lane;
      break;
    case 2:
      j = ln + bval;
      ok = j <= max_lane;
      break;
    default:
      j = ln ^ bval;
      ok = j <= max_lane;
      break;
  }
  return ok ? static_cast<unsigned int>(j) : lane;
}

template <class T>
inline T shuffle(unsigned int mask, T var, int mode, unsigned int b, int width) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffle of a big type");
  unsigned long long bits = 0;
  std::memcpy(&bits, static_cast<const void*>(&var), sizeof(T));
  const unsigned int c =
      (static_cast<unsigned int>(32 - width) << 8) | (mode == 1 ? 0u : 0x1fu);
  const unsigned int lane = lane_id();
  const unsigned long long* slots = warp_exchange(mask, bits);
  const unsigned long long got = slots[shfl_source(lane, mode, b, c)];
  warp_barrier(mask);  // nobody overwrites its slot before everyone has read
  T out;
  std::memcpy(static_cast<void*>(&out), &got, sizeof(T));
  return out;
}

// Votes: the bits of the lanes of `mask` (still running) whose predicate holds; *voters (if
// given) receives those lanes.
inline unsigned int vote_ballot(unsigned int mask, int predicate, unsigned int* voters = nullptr) {
  const unsigned long long* slots = warp_exchange(mask, predicate != 0);
  const unsigned int lanes = (mask | (1u << lane_id())) & warp_live_mask();
  unsigned int ballot = 0;
  for (unsigned int lane = 0; lane < 32; ++lane) {
    if ((lanes >> lane & 1u) && slots[lane] == 1) ballot |= 1u << lane;
  }
  if (voters != nullptr) *voters = lanes;
  warp_barrier(mask);
  return ballot;
}

// Reductions over the lanes of `mask` (__reduce_*_sync): op 0 add, 1 min, 2 max, 3 and, 4 or,
// 5 xor; `is_signed` for min/max of int.
inline unsigned int warp_reduce(unsigned int mask, unsigned int value, int op, bool is_signed) {
  const unsigned long long* slots = warp_exchange(mask, value);
  const unsigned int lanes = mask & warp_live_mask();
  bool first = true;
  unsigned int acc = 0;
  for (unsigned int lane = 0; lane < 32; ++lane) {
    if (!(lanes >> lane & 1u)) continue;
    const unsigned int v = static_cast<unsigned int>(slots[lane]);
    if (first) {
      acc = v;
      first = false;
      continue;
    }
    switch (op) {
      case 0: acc += v; break;
      case 1:
        acc = is_signed ? (static_cast<int>(v) < static_cast<int>(acc) ? v : acc)
                        : (v < acc ? v : acc);
        break;
      case 2:
        acc = is_signed ? (static_cast<int>(v) > static_cast<int>(acc) ? v : acc)
                        : (v > acc ? v : acc);
        break;
      case 3: acc &= v; break;
      case 4: acc |= v; break;
      default: acc ^= v; break;
    }
  }
  warp_barrier(mask);
  return acc;
}

// ---- Running a launch ----

inline bool alloc_block_state(Worker* w) {
  const unsigned int n = w->nthreads;
  w->nwarps = (n + 31) / 32;
  w->state = new (std::nothrow) unsigned char[n];
  w->fiber_of = new (std::nothrow) Fiber*[n];
  w->ready = new (std::nothrow) unsigned int[n];
  w->bar_waiters = new (std::nothrow) unsigned int[n];
  w->warps = new (std::nothrow) Warp[w->nwarps];
  w->fibers = new (std::nothrow) Fiber*[n];
  w->idle = new (std::nothrow) Fiber*[n];
  return w->state && w->fiber_of && w->ready && w->bar_waiters && w->warps && w->fibers &&
         w->idle;
}

inline void free_worker(Worker* w) {
  for (unsigned int i = 0; i < w->nfibers; ++i) {
    munmap(w->fibers[i]->mapping, w->fibers[i]->mapping_size);
    delete w->fibers[i];
  }
  delete[] w->state;
  delete[] w->fiber_of;
  delete[] w->ready;
  delete[] w->bar_waiters;
  delete[] w->warps;
  delete[] w->fibers;
  delete[] w->idle;
}

inline void reset_block(Worker* w) {
  w->next_unstarted = 0;
  w->live = w->nthreads;
  w->ready_head = w->ready_count = 0;
  w->bar_nwaiters = w->bar_arrived = w->bar_gen = 0;
  w->bar_acc = 0;
  for (unsigned int t = 0; t < w->nthreads; ++t) w->state[t] = kUnstarted;
  for (unsigned int i = 0; i < w->nwarps; ++i) {
    Warp& ws = w->warps[i];
    const unsigned int lanes = w->nthreads - i * 32 < 32 ? w->nthreads - i * 32 : 32;
    ws.live = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
    ws.arrived = 0;
    for (unsigned int l = 0; l < 32; ++l) ws.slot[l] = kGarbage64;
  }
}

inline void run_block(Worker* w, unsigned long long block) {
  const dim3& grid = g_ctx.grid_dim;
  g_ctx.block_idx = uint3{static_cast<unsigned int>(block % grid.x),
                          static_cast<unsigned int>(block / grid.x % grid.y),
                          static_cast<unsigned int>(block / (1ull * grid.x * grid.y))};
  reset_block(w);
  Fiber* first = next_runnable(w);
  if (first == nullptr) {
    record_error(w->launch, "fault: out of memory for fiber stacks");
    w->aborted = true;
    return;
  }
  switch_to(w, &w->main_ctx, first);
}

inline void* worker_main(void* arg) {
  Launch* launch = static_cast<Launch*>(arg);
  const LaunchConfig& c = *launch->config;
  Worker worker{};
  Worker* w = &worker;
  w->launch = launch;
  w->nthreads = c.block[0] * c.block[1] * c.block[2];
  g_ctx.worker = w;
  g_ctx.block_dim = dim3(c.block[0], c.block[1], c.block[2]);
  g_ctx.grid_dim = dim3(c.grid[0], c.grid[1], c.grid[2]);
  if (!alloc_block_state(w)) {
    record_error(launch, "fault: out of memory");
  } else {
    std::memset(fz_smem, 0xCD, static_cast<size_t>(c.dynamic_smem_bytes));
    while (!__atomic_load_n(&launch->failed, __ATOMIC_SEQ_CST)) {
      const unsigned long long b = __atomic_fetch_add(&launch->next_block, 1ull, __ATOMIC_SEQ_CST);
      if (b >= launch->num_blocks) break;
      run_block(w, b);
      if (w->aborted) break;
    }
  }
  free_worker(w);
  g_ctx.worker = nullptr;
  return nullptr;
}

// The checks CUDA makes at launch; returns an error message or nullptr.
inline const char* check_config(const LaunchConfig& c, unsigned int max_threads, char* buf,
                                size_t size) {
  const unsigned long long threads = 1ull * c.block[0] * c.block[1] * c.block[2];
  if (c.struct_size != sizeof(LaunchConfig)) {
    std::snprintf(buf, size, "fault: launch configuration of %u bytes, expected %zu",
                  c.struct_size, sizeof(LaunchConfig));
  } else if (c.block[0] == 0 || c.block[1] == 0 || c.block[2] == 0 || c.grid[0] == 0 ||
             c.grid[1] == 0 || c.grid[2] == 0) {
    std::snprintf(buf, size,
                  "config: invalid configuration argument: grid (%u,%u,%u) and block (%u,%u,%u) "
                  "must have no zero dimension",
                  c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2]);
  } else if (c.block[0] > 1024 || c.block[1] > 1024 || c.block[2] > 64 || threads > 1024) {
    std::snprintf(buf, size,
                  "config: invalid configuration argument: block (%u,%u,%u) exceeds the limits "
                  "(x, y <= 1024, z <= 64, at most 1024 threads)",
                  c.block[0], c.block[1], c.block[2]);
  } else if (c.grid[0] > 2147483647u || c.grid[1] > 65535 || c.grid[2] > 65535) {
    std::snprintf(buf, size,
                  "config: invalid configuration argument: grid (%u,%u,%u) exceeds the limits "
                  "(x < 2^31, y, z <= 65535)",
                  c.grid[0], c.grid[1], c.grid[2]);
  } else if (c.dynamic_smem_bytes > kMaxDynamicSmemBytes) {
    std::snprintf(buf, size,
                  "config: invalid argument: %llu bytes of dynamic shared memory, the limit "
                  "is %llu",
                  c.dynamic_smem_bytes, kMaxDynamicSmemBytes);
  } else if (max_threads != 0 && threads > max_threads) {
    std::snprintf(buf, size,
                  "config: too many resources requested for launch: %llu threads per block, "
                  "__launch_bounds__ allows %u",
                  threads, max_threads);
  } else {
    return nullptr;
  }
  return buf;
}

inline unsigned int default_host_threads() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned int>(n) : 1u;
}

// Runs body() once per CUDA thread of the grid; returns nullptr or an error message (valid
// until the next launch on this host thread) starting with "config: " (the launch was refused,
// as CUDA would) or "fault: " (the kernel failed).
inline const char* launch_erased(const LaunchConfig& c, unsigned int max_threads,
                                 void (*body)(void*), void* body_arg) {
  static thread_local char message[1024];
  if (check_config(c, max_threads, message, sizeof message) != nullptr) return message;

  Launch launch{};
  launch.config = &c;
  launch.body = body;
  launch.body_arg = body_arg;
  launch.num_blocks = 1ull * c.grid[0] * c.grid[1] * c.grid[2];
  launch.stack_bytes = static_cast<size_t>(c.stack_bytes ? c.stack_bytes : kDefaultStackBytes);
  pthread_mutex_init(&launch.error_mutex, nullptr);

  unsigned long long nworkers = c.host_threads ? c.host_threads : default_host_threads();
  if (nworkers > launch.num_blocks) nworkers = launch.num_blocks;
  if (nworkers > 1024) nworkers = 1024;
  pthread_t threads[1024];
  unsigned int started = 0;
  for (; started < nworkers; ++started) {
    if (pthread_create(&threads[started], nullptr, worker_main, &launch) != 0) break;
  }
  if (started == 0) record_error(&launch, "fault: cannot create a host thread");
  for (unsigned int i = 0; i < started; ++i) pthread_join(threads[i], nullptr);
  pthread_mutex_destroy(&launch.error_mutex);
  if (!launch.failed) return nullptr;
  std::snprintf(message, sizeof message, "%s", launch.error);
  return message;
}

template <class F>
inline const char* launch(const LaunchConfig& c, unsigned int max_threads, F&& body) {
  using Body = std::remove_reference_t<F>;
  return launch_erased(
      c, max_threads, [](void* p) { (*static_cast<Body*>(p))(); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace fuserc_emu

// ==== Synchronization and warp intrinsics =======================================================

inline void __syncthreads() { fuserc_emu::block_barrier(0, nullptr); }
inline int __syncthreads_count(int predicate) {
  return fuserc_emu::block_barrier(predicate, nullptr);
}
inline int __syncthreads_and(int predicate) {
  unsigned int participants = 0;
  const int count = fuserc_emu::block_barrier(predicate, &participants);
  return static_cast<unsigned int>(count) == participants;
}
inline int __syncthreads_or(int predicate) {
  return fuserc_emu::block_barrier(predicate, nullptr) != 0;
}
inline void __syncwarp(unsigned int mask = 0xffffffffu) { fuserc_emu::warp_barrier(mask); }
inline unsigned int __activemask() { return fuserc_emu::warp_live_mask(); }
inline void __nanosleep(unsigned int) { fuserc_emu::yield_thread(); }

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

[[noreturn]] inline void __trap() {
  fuserc_emu::abort_block(fuserc_emu::g_ctx.worker, "__trap()");
}
[[noreturn]] inline void __brkpt() {
  fuserc_emu::abort_block(fuserc_emu::g_ctx.worker, "__brkpt()");
}

inline long long clock64() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000ll + ts.tv_nsec;
}

#define FUSERC_EMU_SHFL(T)                                                                      \
  inline T __shfl_sync(unsigned int mask, T var, int src_lane, int width = warpSize) {          \
    return fuserc_emu::shuffle<T>(mask, var, 0, static_cast<unsigned int>(src_lane), width);    \
  }                                                                                             \
  inline T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize) { \
    return fuserc_emu::shuffle<T>(mask, var, 1, delta, width);                                  \
  }                                                                                             \
  inline T __shfl_down_sync(unsigned int mask, T var, unsigned int delta,                       \
                            int width = warpSize) {                                             \
    return fuserc_emu::shuffle<T>(mask, var, 2, delta, width);                                  \
  }                                                                                             \
  inline T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = warpSize) {     \
    return fuserc_emu::shuffle<T>(mask, var, 3, static_cast<unsigned int>(lane_mask), width);   \
  }
FUSERC_EMU_SHFL(int)
FUSERC_EMU_SHFL(unsigned int)
FUSERC_EMU_SHFL(long)
FUSERC_EMU_SHFL(unsigned long)
FUSERC_EMU_SHFL(long long)
FUSERC_EMU_SHFL(unsigned long long)
FUSERC_EMU_SHFL(float)
FUSERC_EMU_SHFL(double)

inline unsigned int __ballot_sync(unsigned int mask, int predicate) {
  return fuserc_emu::vote_ballot(mask, predicate) & mask;
}
inline int __all_sync(unsigned int mask, int predicate) {
  unsigned int voters = 0;
  const unsigned int ballot = fuserc_emu::vote_ballot(mask, predicate, &voters);
  return ballot == voters;
}
inline int __any_sync(unsigned int mask, int predicate) {
  return fuserc_emu::vote_ballot(mask, predicate) != 0;
}
inline unsigned int __reduce_add_sync(unsigned int mask, unsigned int value) {
  return fuserc_emu::warp_reduce(mask, value, 0, false);
}
inline unsigned int __reduce_min_sync(unsigned int mask, unsigned int value) {
  return fuserc_emu::warp_reduce(mask, value, 1, false);
}
inline unsigned int __reduce_max_sync(unsigned int mask, unsigned int value) {
  return fuserc_emu::warp_reduce(mask, value, 2, false);
}
inline int __reduce_add_sync(unsigned int mask, int value) {
  return static_cast<int>(fuserc_emu::warp_reduce(mask, static_cast<unsigned int>(value), 0, true));
}
inline int __reduce_min_sync(unsigned int mask, int value) {
  return static_cast<int>(fuserc_emu::warp_reduce(mask, static_cast<unsigned int>(value), 1, true));
}
inline int __reduce_max_sync(unsigned int mask, int value) {
  return static_cast<int>(fuserc_emu::warp_reduce(mask, static_cast<unsigned int>(value), 2, true));
}
inline unsigned int __reduce_and_sync(unsigned int mask, unsigned int value) {
  return fuserc_emu::warp_reduce(mask, value, 3, false);
}
inline unsigned int __reduce_or_sync(unsigned int mask, unsigned int value) {
  return fuserc_emu::warp_reduce(mask, value, 4, false);
}
inline unsigned int __reduce_xor_sync(unsigned int mask, unsigned int value) {
  return fuserc_emu::warp_reduce(mask, value, 5, false);
}

// ==== Bit casts and integer intrinsics ==========================================================

namespace fuserc_emu {
template <class To, class From>
inline To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast of different sizes");
  To to;
  std::memcpy(static_cast<void*>(&to), &from, sizeof to);
  return to;
}
}  // namespace fuserc_emu

inline float __int_as_float(int x) { return fuserc_emu::bit_cast<float>(x); }
inline int __float_as_int(float x) { return fuserc_emu::bit_cast<int>(x); }
inline float __uint_as_float(unsigned int x) { return fuserc_emu::bit_cast<float>(x); }
inline unsigned int __float_as_uint(float x) { return fuserc_emu::bit_cast<unsigned int>(x); }
inline double __longlong_as_double(long long x) { return fuserc_emu::bit_cast<double>(x); }
inline long long __double_as_longlong(double x) { return fuserc_emu::bit_cast<long long>(x); }
inline int __double2hiint(double x) {
  return static_cast<int>(fuserc_emu::bit_cast<unsigned long long>(x) >> 32);
}
inline int __double2loint(double x) {
  return static_cast<int>(fuserc_emu::bit_cast<unsigned long long>(x));
}
inline double __hiloint2double(int hi, int lo) {
  return fuserc_emu::bit_cast<double>(static_cast<unsigned long long>(static_cast<unsigned int>(hi))
                                          << 32 |
                                      static_cast<unsigned int>(lo));
}

inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return static_cast<unsigned long long>(__brev(static_cast<unsigned int>(x))) << 32 |
         __brev(static_cast<unsigned int>(x >> 32));
}
inline int __mulhi(int a, int b) { return static_cast<int>((1ll * a * b) >> 32); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((1ull * a * b) >> 32);
}
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = static_cast<unsigned long long>(hi) << 32 | lo;
  return static_cast<unsigned int>((v << (shift & 31u)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = static_cast<unsigned long long>(hi) << 32 | lo;
  return static_cast<unsigned int>(v >> (shift & 31u));
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = static_cast<unsigned long long>(hi) << 32 | lo;
  return static_cast<unsigned int>((v << (shift > 32u ? 32u : shift)) >> 32);
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = static_cast<unsigned long long>(hi) << 32 | lo;
  return static_cast<unsigned int>(v >> (shift > 32u ? 32u : shift));
}

// ==== min / max (CUDA's device overloads) =======================================================

inline int min(int a, int b) { return a < b ? a : b; }
inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
inline unsigned int min(int a, unsigned int b) { return min(static_cast<unsigned int>(a), b); }
inline unsigned int min(unsigned int a, int b) { return min(a, static_cast<unsigned int>(b)); }
inline long min(long a, long b) { return a < b ? a : b; }
inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
inline unsigned long min(long a, unsigned long b) { return min(static_cast<unsigned long>(a), b); }
inline unsigned long min(unsigned long a, long b) { return min(a, static_cast<unsigned long>(b)); }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long min(long long a, unsigned long long b) {
  return min(static_cast<unsigned long long>(a), b);
}
inline unsigned long long min(unsigned long long a, long long b) {
  return min(a, static_cast<unsigned long long>(b));
}
inline float min(float a, float b) { return fminf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double min(float a, double b) { return fmin(static_cast<double>(a), b); }
inline double min(double a, float b) { return fmin(a, static_cast<double>(b)); }

inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
inline unsigned int max(int a, unsigned int b) { return max(static_cast<unsigned int>(a), b); }
inline unsigned int max(unsigned int a, int b) { return max(a, static_cast<unsigned int>(b)); }
inline long max(long a, long b) { return a > b ? a : b; }
inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
inline unsigned long max(long a, unsigned long b) { return max(static_cast<unsigned long>(a), b); }
inline unsigned long max(unsigned long a, long b) { return max(a, static_cast<unsigned long>(b)); }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline unsigned long long max(long long a, unsigned long long b) {
  return max(static_cast<unsigned long long>(a), b);
}
inline unsigned long long max(unsigned long long a, long long b) {
  return max(a, static_cast<unsigned long long>(b));
}
inline float max(float a, float b) { return fmaxf(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double max(float a, double b) { return fmax(static_cast<double>(a), b); }
inline double max(double a, float b) { return fmax(a, static_cast<double>(b)); }

inline unsigned int umin(unsigned int a, unsigned int b) { return min(a, b); }
inline unsigned int umax(unsigned int a, unsigned int b) { return max(a, b); }
inline long long llmin(long long a, long long b) { return min(a, b); }
inline long long llmax(long long a, long long b) { return max(a, b); }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return min(a, b); }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return max(a, b); }

// ==== Math ======================================================================================
// The C library's functions (<math.h>: expf, exp(float), isnan, ...) are CUDA's names already;
// their results can differ from CUDA's in the last bits (each side is within its documented ulp
// bounds). What CUDA adds:

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }  // NaN -> 0
inline float __saturatef(float x) { return saturatef(x); }
inline float fdividef(float a, float b) { return a / b; }
inline float __fdividef(float a, float b) { return a / b; }
inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }
inline double sinpi(double x) { return sin(M_PI * remainder(x, 2.0)); }
inline double cospi(double x) { return cos(M_PI * remainder(x, 2.0)); }
inline float sinpif(float x) { return static_cast<float>(sinpi(x)); }
inline float cospif(float x) { return static_cast<float>(cospi(x)); }
// The fast-math intrinsics, computed accurately.
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { sincosf(x, s, c); }
inline float __powf(float x, float y) { return powf(x, y); }
// Explicitly rounded operations (the emulation is compiled with -ffp-contract=off, so a plain
// operation is never fused).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __frsqrt_rn(float a) { return static_cast<float>(1.0 / sqrt(static_cast<double>(a))); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __drcp_rn(double a) { return 1.0 / a; }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

// ==== Conversions ==============================================================================

namespace fuserc_emu {

enum Rounding { kRn, kRz, kRd, kRu };

template <class F>
inline F round_to_integer(F x, Rounding mode) {
  switch (mode) {
    case kRn: return std::nearbyint(x);  // the default rounding mode: to nearest even
    case kRz: return std::trunc(x);
    case kRd: return std::floor(x);
    default: return std::ceil(x);
  }
}

// CUDA's float-to-integer conversions: round as `mode` says, saturate to I's range, NaN -> 0.
template <class I, class F>
inline I to_integer_saturating(F x, Rounding mode) {
  if (std::isnan(x)) return 0;
  const F r = round_to_integer(x, mode);
  constexpr int kBits = static_cast<int>(sizeof(I) * 8);
  if (std::is_signed<I>::value) {
    const F lo = -std::ldexp(F(1), kBits - 1);  // exact powers of two
    const F hi = std::ldexp(F(1), kBits - 1);
    if (r < lo) return std::numeric_limits<I>::min();
    if (r >= hi) return std::numeric_limits<I>::max();
  } else {
    if (r <= F(0)) return 0;
    if (r >= std::ldexp(F(1), kBits)) return std::numeric_limits<I>::max();
  }
  return static_cast<I>(r);
}

}  // namespace fuserc_emu

#define FUSERC_EMU_TO_INT(F, fname, I, iname)                        \
  inline I __##fname##2##iname##_rn(F x) {                           \
    return fuserc_emu::to_integer_saturating<I>(x, fuserc_emu::kRn); \
  }                                                                  \
  inline I __##fname##2##iname##_rz(F x) {                           \
    return fuserc_emu::to_integer_saturating<I>(x, fuserc_emu::kRz); \
  }                                                                  \
  inline I __##fname##2##iname##_rd(F x) {                           \
    return fuserc_emu::to_integer_saturating<I>(x, fuserc_emu::kRd); \
  }                                                                  \
  inline I __##fname##2##iname##_ru(F x) {                           \
    return fuserc_emu::to_integer_saturating<I>(x, fuserc_emu::kRu); \
  }
FUSERC_EMU_TO_INT(float, float, int, int)
FUSERC_EMU_TO_INT(float, float, unsigned int, uint)
FUSERC_EMU_TO_INT(float, float, long long, ll)
FUSERC_EMU_TO_INT(float, float, unsigned long long, ull)
FUSERC_EMU_TO_INT(double, double, int, int)
FUSERC_EMU_TO_INT(double, double, unsigned int, uint)
FUSERC_EMU_TO_INT(double, double, long long, ll)
FUSERC_EMU_TO_INT(double, double, unsigned long long, ull)
#undef FUSERC_EMU_TO_INT

inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned int x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline float __ull2float_rn(unsigned long long x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }
inline double __uint2double_rn(unsigned int x) { return static_cast<double>(x); }
inline double __ll2double_rn(long long x) { return static_cast<double>(x); }
inline double __ull2double_rn(unsigned long long x) { return static_cast<double>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }

// ==== __half and __nv_bfloat16 =================================================================

namespace fuserc_emu {

inline unsigned int float_bits(float f) { return bit_cast<unsigned int>(f); }

// Adds one to `bits` (a truncated result) when the dropped part `rem` (0x80000000 = one half)
// is above a half, or exactly a half and `bits` is odd.
inline unsigned int round_nearest_even(unsigned int bits, unsigned int rem) {
  return bits + (rem > 0x80000000u || (rem == 0x80000000u && (bits & 1u)));
}
inline unsigned long long round_nearest_even64(unsigned long long bits, unsigned long long rem) {
  const unsigned long long half = 1ull << 63;
  return bits + (rem > half || (rem == half && (bits & 1u)));
}

// As CUDA's __float2half_rn: round to nearest even, overflow to infinity, NaN -> 0x7fff.
inline unsigned short float_to_f16(float value) {
  const unsigned int x = float_bits(value);
  const unsigned int sign = (x >> 16) & 0x8000u;
  const unsigned int abs = x & 0x7fffffffu;
  unsigned int result, rem;
  if (abs >= 0x7f800000u) {
    return static_cast<unsigned short>(abs == 0x7f800000u ? (sign | 0x7c00u) : 0x7fffu);
  } else if (abs > 0x477fefffu) {  // at or above 65520
    return static_cast<unsigned short>(sign | 0x7c00u);
  } else if (abs >= 0x38800000u) {  // normal (>= 2^-14)
    rem = abs << 19;
    result = (abs - 0x38000000u) >> 13;
  } else if (abs <= 0x33000000u) {  // at most 2^-25: zero
    return static_cast<unsigned short>(sign);
  } else {  // subnormal
    const unsigned int shift = 0x7eu - (abs >> 23);  // 14..24
    const unsigned int mantissa = (abs & 0x7fffffu) | 0x800000u;
    rem = mantissa << (32 - shift);
    result = mantissa >> shift;
  }
  return static_cast<unsigned short>(sign | round_nearest_even(result, rem));
}

// As CUDA's __half2float (any NaN becomes 0x7fffffff).
inline float f16_to_float(unsigned short bits) {
  const unsigned int sign = static_cast<unsigned int>(bits & 0x8000u) << 16;
  const unsigned int exponent = (bits >> 10) & 0x1fu;
  unsigned int mantissa = bits & 0x3ffu;
  unsigned int out;
  if (exponent == 0x1fu) {
    out = mantissa != 0 ? 0x7fffffffu : (sign | 0x7f800000u);
  } else if (exponent != 0) {
    out = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;
  } else {
    unsigned int e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    out = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return bit_cast<float>(out);
}

// As CUDA's __float2bfloat16_rn: round to nearest even, NaN -> 0x7fff.
inline unsigned short float_to_bf16(float value) {
  const unsigned int x = float_bits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
  return static_cast<unsigned short>(round_nearest_even(x >> 16, x << 16));
}

inline float bf16_to_float(unsigned short bits) {
  return bit_cast<float>(static_cast<unsigned int>(bits) << 16);
}

// A double rounded once (not through float) to a 16-bit format with `mant_bits` mantissa bits
// and exponent bias `bias`: CUDA's __double2half / __double2bfloat16.
inline unsigned short double_to_small(double value, int mant_bits, int bias) {
  const unsigned long long x = bit_cast<unsigned long long>(value);
  const unsigned int sign = static_cast<unsigned int>(x >> 48) & 0x8000u;
  const unsigned long long abs = x & 0x7fffffffffffffffull;
  const unsigned int inf = ((2u * static_cast<unsigned int>(bias) + 1u) << mant_bits);
  if (abs > 0x7ff0000000000000ull) return 0x7fffu;
  if (abs == 0x7ff0000000000000ull) return static_cast<unsigned short>(sign | inf);
  const int e = static_cast<int>(abs >> 52) - 1023;
  const unsigned long long mant = abs & 0xfffffffffffffull;
  const int min_normal = 1 - bias;
  unsigned long long q, rem;
  if (e > bias) return static_cast<unsigned short>(sign | inf);
  if (e >= min_normal) {
    const int shift = 52 - mant_bits;
    q = (static_cast<unsigned long long>(e + bias) << mant_bits) | (mant >> shift);
    rem = mant << (64 - shift);
  } else {
    if ((abs >> 52) == 0) return static_cast<unsigned short>(sign);  // double subnormal: tiny
    const unsigned long long full = mant | (1ull << 52);
    const int shift = 52 - mant_bits + (min_normal - e);
    if (shift > 53) return static_cast<unsigned short>(sign);
    q = full >> shift;
    rem = full << (64 - shift);
  }
  const unsigned long long r = round_nearest_even64(q, rem);  // a carry may reach infinity
  return static_cast<unsigned short>(sign | (r > inf ? inf : r));
}

// An integer as a double rounded to odd when inexact, so that rounding it again to 16 bits
// equals rounding the integer once.
inline double integer_to_double_odd(unsigned long long magnitude, bool negative) {
  double d;
  if (magnitude < (1ull << 53)) {
    d = static_cast<double>(magnitude);
  } else {
    const int drop = 64 - __builtin_clzll(magnitude) - 53;
    unsigned long long kept = magnitude >> drop;
    if (magnitude & ((1ull << drop) - 1)) kept |= 1;
    d = std::ldexp(static_cast<double>(kept), drop);
  }
  return negative ? -d : d;
}

inline double signed_to_double_odd(long long v) {
  const unsigned long long u = static_cast<unsigned long long>(v);
  return integer_to_double_odd(v < 0 ? 0ull - u : u, v < 0);
}

}  // namespace fuserc_emu

struct __half_raw {
  unsigned short x;
};
struct __nv_bfloat16_raw {
  unsigned short x;
};

#define FUSERC_EMU_HALF_TYPE(H, RAW, FROM_FLOAT, TO_FLOAT, MANT, BIAS)          \
  struct __attribute__((aligned(2))) H {                                        \
   protected:                                                                   \
    unsigned short __x;                                                         \
                                                                                \
   public:                                                                      \
    H() = default;                                                              \
    constexpr H(const RAW& r) : __x(r.x) {}                                     \
    H(float f) : __x(FROM_FLOAT(f)) {}                                          \
    H(double d) : __x(fuserc_emu::double_to_small(d, MANT, BIAS)) {}            \
    H(short v) : H(static_cast<double>(v)) {}                                   \
    H(unsigned short v) : H(static_cast<double>(v)) {}                          \
    H(int v) : H(static_cast<double>(v)) {}                                     \
    H(unsigned int v) : H(static_cast<double>(v)) {}                            \
    H(long long v) : H(fuserc_emu::signed_to_double_odd(v)) {}                  \
    H(unsigned long long v) : H(fuserc_emu::integer_to_double_odd(v, false)) {} \
    H& operator=(const RAW& r) {                                                \
      __x = r.x;                                                                \
      return *this;                                                             \
    }                                                                           \
    H& operator=(float f) { return *this = H(f); }                              \
    H& operator=(double d) { return *this = H(d); }                             \
    operator RAW() const {                                                      \
      RAW r;                                                                    \
      r.x = __x;                                                                \
      return r;                                                                 \
    }                                                                           \
    operator float() const { return TO_FLOAT(__x); }                            \
  };

FUSERC_EMU_HALF_TYPE(__half, __half_raw, fuserc_emu::float_to_f16, fuserc_emu::f16_to_float, 10,
                     15)
FUSERC_EMU_HALF_TYPE(__nv_bfloat16, __nv_bfloat16_raw, fuserc_emu::float_to_bf16,
                     fuserc_emu::bf16_to_float, 7, 127)
#undef FUSERC_EMU_HALF_TYPE

typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;

struct __attribute__((aligned(4))) __half2 {
  __half x, y;
};
struct __attribute__((aligned(4))) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};

namespace fuserc_emu {
inline unsigned short bits_of(__half h) { return static_cast<__half_raw>(h).x; }
inline unsigned short bits_of(__nv_bfloat16 h) { return static_cast<__nv_bfloat16_raw>(h).x; }
inline __half half_from_bits(unsigned short b) { return __half(__half_raw{b}); }
inline __nv_bfloat16 bf16_from_bits(unsigned short b) {
  return __nv_bfloat16(__nv_bfloat16_raw{b});
}
inline __half with_bits(__half, unsigned int b) {
  return half_from_bits(static_cast<unsigned short>(b));
}
inline __nv_bfloat16 with_bits(__nv_bfloat16, unsigned int b) {
  return bf16_from_bits(static_cast<unsigned short>(b));
}
}  // namespace fuserc_emu

inline __half __float2half_rn(float f) {
  return fuserc_emu::half_from_bits(fuserc_emu::float_to_f16(f));
}
inline __half __float2half(float f) { return __float2half_rn(f); }
inline float __half2float(__half h) { return fuserc_emu::f16_to_float(fuserc_emu::bits_of(h)); }
inline __half __double2half(double d) { return __half(d); }
inline __half __int2half_rn(int v) { return __half(v); }
inline __half __uint2half_rn(unsigned int v) { return __half(v); }
inline __half __ll2half_rn(long long v) { return __half(v); }
inline __half __ull2half_rn(unsigned long long v) { return __half(v); }
inline int __half2int_rz(__half h) { return __float2int_rz(__half2float(h)); }
inline unsigned int __half2uint_rz(__half h) { return __float2uint_rz(__half2float(h)); }
inline long long __half2ll_rz(__half h) { return __float2ll_rz(__half2float(h)); }
inline short __half_as_short(__half h) { return static_cast<short>(fuserc_emu::bits_of(h)); }
inline unsigned short __half_as_ushort(__half h) { return fuserc_emu::bits_of(h); }
inline __half __short_as_half(short s) {
  return fuserc_emu::half_from_bits(static_cast<unsigned short>(s));
}
inline __half __ushort_as_half(unsigned short s) { return fuserc_emu::half_from_bits(s); }

inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  return fuserc_emu::bf16_from_bits(fuserc_emu::float_to_bf16(f));
}
inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }
inline float __bfloat162float(__nv_bfloat16 h) {
  return fuserc_emu::bf16_to_float(fuserc_emu::bits_of(h));
}
inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
inline __nv_bfloat16 __int2bfloat16_rn(int v) { return __nv_bfloat16(v); }
inline __nv_bfloat16 __ll2bfloat16_rn(long long v) { return __nv_bfloat16(v); }
inline int __bfloat162int_rz(__nv_bfloat16 h) { return __float2int_rz(__bfloat162float(h)); }
inline long long __bfloat162ll_rz(__nv_bfloat16 h) { return __float2ll_rz(__bfloat162float(h)); }
inline short __bfloat16_as_short(__nv_bfloat16 h) {
  return static_cast<short>(fuserc_emu::bits_of(h));
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return fuserc_emu::bits_of(h); }
inline __nv_bfloat16 __short_as_bfloat16(short s) {
  return fuserc_emu::bf16_from_bits(static_cast<unsigned short>(s));
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) {
  return fuserc_emu::bf16_from_bits(s);
}

inline __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
inline __half2 __floats2half2_rn(float a, float b) {
  return __half2{__float2half_rn(a), __float2half_rn(b)};
}
inline __half2 __float2half2_rn(float a) { return __floats2half2_rn(a, a); }
inline float2 __half22float2(__half2 h) {
  return make_float2(__half2float(h.x), __half2float(h.y));
}
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline float __low2float(__half2 h) { return __half2float(h.x); }
inline float __high2float(__half2 h) { return __half2float(h.y); }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat162{a, b};
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return __nv_bfloat162{__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}
inline __nv_bfloat162 __float2bfloat162_rn(float a) { return __floats2bfloat162_rn(a, a); }
inline float2 __bfloat1622float2(__nv_bfloat162 h) {
  return make_float2(__bfloat162float(h.x), __bfloat162float(h.y));
}
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }

// Arithmetic on __half / __nv_bfloat16 (cuda_fp16.hpp / cuda_bf16.hpp): computed in float and
// rounded once more, which is the correctly rounded result for + - * / of 16-bit operands.
#define FUSERC_EMU_HALF_OPS(H, TO, FROM)                                                      \
  inline H __hadd(H a, H b) { return FROM(TO(a) + TO(b)); }                                   \
  inline H __hsub(H a, H b) { return FROM(TO(a) - TO(b)); }                                   \
  inline H __hmul(H a, H b) { return FROM(TO(a) * TO(b)); }                                   \
  inline H __hdiv(H a, H b) { return FROM(TO(a) / TO(b)); }                                   \
  inline H __hneg(H a) { return fuserc_emu::with_bits(a, fuserc_emu::bits_of(a) ^ 0x8000u); } \
  inline H __habs(H a) { return fuserc_emu::with_bits(a, fuserc_emu::bits_of(a) & 0x7fffu); } \
  inline H __hfma(H a, H b, H c) {                                                            \
    return H(fma(static_cast<double>(TO(a)), static_cast<double>(TO(b)),                      \
                 static_cast<double>(TO(c))));                                                \
  }                                                                                           \
  inline H __hmax(H a, H b) { return FROM(fmaxf(TO(a), TO(b))); }                             \
  inline H __hmin(H a, H b) { return FROM(fminf(TO(a), TO(b))); }                             \
  inline bool __heq(H a, H b) { return TO(a) == TO(b); }                                      \
  inline bool __hne(H a, H b) { return TO(a) != TO(b) && !isnan(TO(a)) && !isnan(TO(b)); }    \
  inline bool __hneu(H a, H b) { return TO(a) != TO(b); }                                     \
  inline bool __hlt(H a, H b) { return TO(a) < TO(b); }                                       \
  inline bool __hle(H a, H b) { return TO(a) <= TO(b); }                                      \
  inline bool __hgt(H a, H b) { return TO(a) > TO(b); }                                       \
  inline bool __hge(H a, H b) { return TO(a) >= TO(b); }                                      \
  inline bool __hisnan(H a) { return isnan(TO(a)); }                                          \
  inline int __hisinf(H a) { return isinf(TO(a)) ? (TO(a) < 0 ? -1 : 1) : 0; }                \
  inline H operator+(const H& a, const H& b) { return __hadd(a, b); }                         \
  inline H operator-(const H& a, const H& b) { return __hsub(a, b); }                         \
  inline H operator*(const H& a, const H& b) { return __hmul(a, b); }                         \
  inline H operator/(const H& a, const H& b) { return __hdiv(a, b); }                         \
  inline H& operator+=(H& a, const H& b) { return a = __hadd(a, b); }                         \
  inline H& operator-=(H& a, const H& b) { return a = __hsub(a, b); }                         \
  inline H& operator*=(H& a, const H& b) { return a = __hmul(a, b); }                         \
  inline H& operator/=(H& a, const H& b) { return a = __hdiv(a, b); }                         \
  inline H operator+(const H& a) { return a; }                                                \
  inline H operator-(const H& a) { return __hneg(a); }                                        \
  inline bool operator==(const H& a, const H& b) { return __heq(a, b); }                      \
  inline bool operator!=(const H& a, const H& b) { return __hneu(a, b); }                     \
  inline bool operator<(const H& a, const H& b) { return __hlt(a, b); }                       \
  inline bool operator<=(const H& a, const H& b) { return __hle(a, b); }                      \
  inline bool operator>(const H& a, const H& b) { return __hgt(a, b); }                       \
  inline bool operator>=(const H& a, const H& b) { return __hge(a, b); }
FUSERC_EMU_HALF_OPS(__half, __half2float, __float2half_rn)
FUSERC_EMU_HALF_OPS(__nv_bfloat16, __bfloat162float, __float2bfloat16_rn)
#undef FUSERC_EMU_HALF_OPS

#define FUSERC_EMU_SHFL_HALF(H)                                                                   \
  inline H __shfl_sync(unsigned int mask, H var, int src_lane, int width = warpSize) {            \
    return fuserc_emu::shuffle<H>(mask, var, 0, static_cast<unsigned int>(src_lane), width);      \
  }                                                                                               \
  inline H __shfl_up_sync(unsigned int mask, H var, unsigned int delta, int width = warpSize) {   \
    return fuserc_emu::shuffle<H>(mask, var, 1, delta, width);                                    \
  }                                                                                               \
  inline H __shfl_down_sync(unsigned int mask, H var, unsigned int delta, int width = warpSize) { \
    return fuserc_emu::shuffle<H>(mask, var, 2, delta, width);                                    \
  }                                                                                               \
  inline H __shfl_xor_sync(unsigned int mask, H var, int lane_mask, int width = warpSize) {       \
    return fuserc_emu::shuffle<H>(mask, var, 3, static_cast<unsigned int>(lane_mask), width);     \
  }
FUSERC_EMU_SHFL_HALF(__half)
FUSERC_EMU_SHFL_HALF(__nv_bfloat16)
#undef FUSERC_EMU_SHFL_HALF
#undef FUSERC_EMU_SHFL

// ==== Atomics (global memory is shared by the host threads running blocks) =====================

namespace fuserc_emu {

template <class T, class Op>
inline T atomic_update(T* address, Op op) {
  T old = __atomic_load_n(address, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(address, &old, op(old), false, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST)) {
  }
  return old;
}

// Floating-point read-modify-write through the integer of the same size.
template <class F, class U, class Op>
inline F atomic_update_float(F* address, Op op) {
  U* bits = reinterpret_cast<U*>(address);
  const U old = atomic_update(bits, [&](U b) { return bit_cast<U>(op(bit_cast<F>(b))); });
  return bit_cast<F>(old);
}

}  // namespace fuserc_emu

#define FUSERC_EMU_ATOMIC_INT(T)                                                            \
  inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }      \
  inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }      \
  inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }    \
  inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }      \
  inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }        \
  inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }      \
  inline T atomicMin(T* a, T v) {                                                           \
    return fuserc_emu::atomic_update(a, [v](T o) { return v < o ? v : o; });                \
  }                                                                                         \
  inline T atomicMax(T* a, T v) {                                                           \
    return fuserc_emu::atomic_update(a, [v](T o) { return v > o ? v : o; });                \
  }                                                                                         \
  inline T atomicCAS(T* a, T compare, T v) {                                                \
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    return compare;                                                                         \
  }
FUSERC_EMU_ATOMIC_INT(int)
FUSERC_EMU_ATOMIC_INT(unsigned int)
FUSERC_EMU_ATOMIC_INT(unsigned long long)
FUSERC_EMU_ATOMIC_INT(long long)
#undef FUSERC_EMU_ATOMIC_INT

inline unsigned short atomicCAS(unsigned short* a, unsigned short compare, unsigned short v) {
  __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
inline float atomicAdd(float* a, float v) {
  return fuserc_emu::atomic_update_float<float, unsigned int>(a, [v](float o) { return o + v; });
}
inline double atomicAdd(double* a, double v) {
  return fuserc_emu::atomic_update_float<double, unsigned long long>(
      a, [v](double o) { return o + v; });
}
inline float atomicExch(float* a, float v) {
  return __uint_as_float(__atomic_exchange_n(reinterpret_cast<unsigned int*>(a),
                                             __float_as_uint(v), __ATOMIC_SEQ_CST));
}
inline unsigned int atomicInc(unsigned int* a, unsigned int v) {
  return fuserc_emu::atomic_update(a, [v](unsigned int o) { return o >= v ? 0u : o + 1u; });
}
inline unsigned int atomicDec(unsigned int* a, unsigned int v) {
  return fuserc_emu::atomic_update(a,
                                   [v](unsigned int o) { return (o == 0 || o > v) ? v : o - 1u; });
}

// ==== Memory access intrinsics =================================================================

template <class T>
inline T __ldg(const T* p) { return *p; }
template <class T>
inline T __ldcg(const T* p) { return *p; }
template <class T>
inline T __ldca(const T* p) { return *p; }
template <class T>
inline T __ldcs(const T* p) { return *p; }
template <class T>
inline T __ldlu(const T* p) { return *p; }
template <class T>
inline T __ldcv(const T* p) { return *p; }
template <class T>
inline void __stwb(T* p, T v) { *p = v; }
template <class T>
inline void __stcg(T* p, T v) { *p = v; }
template <class T>
inline void __stcs(T* p, T v) { *p = v; }
template <class T>
inline void __stwt(T* p, T v) { *p = v; }

#endif  // FUSERC_RUNTIME_EMULATOR_CUDA_EMULATION_H_
