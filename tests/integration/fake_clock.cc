// Preloaded (LD_PRELOAD) by the reproducibility test: the wall clock of the process reads about
// ten years later than it is (the monotonic clocks are untouched), so that a package compiled
// "in 2035" can be compared byte for byte with one compiled now.
#include <dlfcn.h>
#include <sys/time.h>
#include <time.h>

namespace {

constexpr time_t kShift = 10 * 365 * 24 * 3600;

bool is_wall_clock(clockid_t id) {
  return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI;
}

}  // namespace

extern "C" {

int clock_gettime(clockid_t id, struct timespec* ts) {
  using Fn = int (*)(clockid_t, struct timespec*);
  static Fn real = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "clock_gettime"));
  const int r = real(id, ts);
  if (r == 0 && ts != nullptr && is_wall_clock(id)) ts->tv_sec += kShift;
  return r;
}

int gettimeofday(struct timeval* tv, void* tz) {
  using Fn = int (*)(struct timeval*, void*);
  static Fn real = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "gettimeofday"));
  const int r = real(tv, tz);
  if (r == 0 && tv != nullptr) tv->tv_sec += kShift;
  return r;
}

time_t time(time_t* out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out != nullptr) *out = ts.tv_sec;
  return ts.tv_sec;
}

}  // extern "C"
