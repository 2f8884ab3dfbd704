#include "codegen/nvrtc/nvrtc_compiler.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "codegen/nvrtc/nvrtc_cache.h"
#include "codegen/nvrtc/nvrtc_library.h"
#include "codegen/nvrtc/nvrtc_toolchain.h"
#include "core/base/diagnostics.h"
#include "core/base/disk_cache.h"
#include "core/base/file_io.h"
#include "core/base/worker_processes.h"

#ifndef FUSERC_CUDA_INCLUDE_DIR
#define FUSERC_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace fuserc {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The log without ptxas' informational report.
std::string diagnostics_of(const std::string& log) {
  std::istringstream in(log);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("ptxas info", 0) == 0 || line.rfind("ptxas         .", 0) == 0 || line.empty())
      continue;
    out += line + "\n";
  }
  return out;
}

std::string first_lines(const std::string& text, int n) {
  std::istringstream in(text);
  std::string line, out;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += (i ? " | " : "") + line;
  return out;
}

struct Job {
  KernelSummary* kernel;
  int arch;
  bool want_ptx;
  std::vector<std::string> options;  // exactly what NVRTC gets
  std::string cache_key;             // "" without a cache
  NvrtcOutput result;
  bool cached = false;
  std::string error;  // empty on success
};

void run_job(Job& job, const NvrtcOptions& options) {
  const NvrtcApi& api = nvrtc();
  const KernelSummary& k = *job.kernel;
  nvrtcProgram prog;
  std::string file = k.name + ".cu";
  // Test-only failure injection (README "Hardening"): with FUSERC_TEST_FAIL_NVRTC set, NVRTC
  // sees an #error first, so that tests can check what a failed compilation leaves behind.
  static const bool inject_failure = std::getenv("FUSERC_TEST_FAIL_NVRTC") != nullptr;
  const std::string injected = inject_failure ? "#error FUSERC_TEST_FAIL_NVRTC\n" + k.source : "";
  const char* source = inject_failure ? injected.c_str() : k.source.c_str();
  if (api.create_program(&prog, source, file.c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    job.error = "nvrtcCreateProgram failed for generated kernel " + k.name;
    return;
  }
  std::vector<const char*> argv;
  for (const auto& o : job.options) argv.push_back(o.c_str());
  nvrtcResult r = api.compile_program(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  api.get_program_log_size(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) api.get_program_log(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  std::string diag = diagnostics_of(log);
  if (r != NVRTC_SUCCESS || lower(diag).find("warning") != std::string::npos ||
      lower(diag).find("error") != std::string::npos) {
    std::string dir = options.failure_dir.empty() ? "." : options.failure_dir;
    std::string saved = (std::filesystem::path(dir) / ("__failed_" + k.name + ".cu")).string();
    try {
      write_file_atomically(saved, k.source);
    } catch (const UserError&) {
      saved = "(could not be saved)";
    }
    job.error = std::string(r != NVRTC_SUCCESS ? "NVRTC failed to compile" : "NVRTC warned about") +
                " generated kernel " + k.name + " for sm_" + std::to_string(job.arch) + ": " +
                first_lines(diag.empty() ? log : diag, 6) + "; source saved at " + saved;
    api.destroy_program(&prog);
    return;
  }
  ArchBinary& b = job.result.binary;
  parse_ptxas_report(log, b);
  b.arch = job.arch;
  size_t n = 0;
  api.get_cubin_size(prog, &n);
  b.cubin.resize(n);
  if (n) api.get_cubin(prog, b.cubin.data());
  if (job.want_ptx) {
    api.get_ptx_size(prog, &n);
    job.result.ptx.resize(n);
    if (n) api.get_ptx(prog, job.result.ptx.data());
    while (!job.result.ptx.empty() && job.result.ptx.back() == '\0') job.result.ptx.pop_back();
    job.result.has_ptx = true;
  }
  api.destroy_program(&prog);
}

// Fills `job` from the cache, unless it is not there (or lacks the PTX the job needs).
void lookup(Job& job, DiskCache& cache) {
  std::optional<std::string> bytes = cache.get(job.cache_key);
  if (!bytes) return;
  std::optional<NvrtcOutput> r = decode_nvrtc_result(*bytes);
  if (!r || r->binary.arch != job.arch || (job.want_ptx && !r->has_ptx)) return;
  job.result = std::move(*r);
  if (!job.want_ptx) {
    job.result.has_ptx = false;
    job.result.ptx.clear();
  }
  job.cached = true;
}

// What a worker process sends back for a job: 'R' and the result, or 'E' and the error.
std::string job_outcome(const Job& j) {
  return j.error.empty() ? "R" + encode_nvrtc_result(j.result) : "E" + j.error;
}

void take_outcome(Job& j, const std::string& bytes) {
  std::optional<NvrtcOutput> r;
  if (!bytes.empty() && bytes[0] == 'R') r = decode_nvrtc_result(bytes.substr(1));
  if (r)
    j.result = std::move(*r);
  else if (!bytes.empty() && bytes[0] == 'E')
    j.error = bytes.substr(1);
  else
    j.error =
        "a malformed NVRTC result came back from a worker process for kernel " + j.kernel->name;
}

// Runs the jobs that were not cached, the longest sources first (so that no long compilation
// is left to run alone at the end), reporting progress per kernel. They run in forked worker
// processes (core/base/worker_processes.h), also a single job: NVRTC serialises part of
// concurrent compilations in one process (on 2 cores, 2 threads compiled a 12-job graph 1.6x
// faster than 1, 2 processes 1.9x), and a worker keeps NVRTC's state out of this process (its
// memory, the thread-local storage of the libraries it loads, which LeakSanitizer's tracer
// crashed on at exit after one in-process recompilation) and turns a crash inside NVRTC into
// an error message. Threads of this process are the fallback when fork fails or when this
// process has other threads (forking then is unsafe: core/base/worker_processes.h).
void compile_misses(std::vector<Job>& jobs, const NvrtcOptions& options) {
  std::vector<Job*> todo;
  std::map<const KernelSummary*, int> left;  // jobs left per kernel
  for (Job& j : jobs)
    if (!j.cached) {
      todo.push_back(&j);
      ++left[j.kernel];
    }
  if (todo.empty()) return;
  std::stable_sort(todo.begin(), todo.end(), [](const Job* a, const Job* b) {
    return a->kernel->source.size() > b->kernel->source.size();
  });
  nvrtc();  // loaded once here, before any worker: a missing library is one message
  std::mutex mutex;
  size_t kernels_done = 0;
  const size_t kernels_total = left.size();
  if (options.progress) options.progress(0, kernels_total);
  auto finished = [&](Job& j) {  // in this process, with `mutex` held
    if (j.error.empty() && options.cache)
      options.cache->put(j.cache_key, encode_nvrtc_result(j.result));
    if (--left[j.kernel] == 0 && options.progress) options.progress(++kernels_done, kernels_total);
  };
  const int parallel = std::max(1, std::min<int>(options.jobs, static_cast<int>(todo.size())));
  WorkerRun run = run_in_worker_processes(
      todo.size(), parallel,
      [&](size_t i) {
        run_job(*todo[i], options);
        return job_outcome(*todo[i]);
      },
      [&](size_t i, std::string&& bytes) {
        take_outcome(*todo[i], bytes);
        std::lock_guard<std::mutex> lock(mutex);
        finished(*todo[i]);
      },
      options.waiting);
  if (run.started) {
    for (size_t i = 0; i < todo.size(); ++i)
      if (!run.finished[i])
        todo[i]->error = "the NVRTC compilation of kernel " + todo[i]->kernel->name + " for sm_" +
                         std::to_string(todo[i]->arch) + " did not finish: " +
                         (run.problem.empty() ? "its worker process died" : run.problem);
    return;
  }
  // not forked: threads of this process
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < todo.size(); i = next++) {
      run_job(*todo[i], options);
      std::lock_guard<std::mutex> lock(mutex);
      finished(*todo[i]);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < parallel; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

// One message for every failed compilation (each on its own line after the first).
void report_failures(const std::vector<Job>& jobs) {
  std::vector<std::string> errors;
  for (const auto& j : jobs)
    if (!j.error.empty()) errors.push_back(j.error);
  if (errors.empty()) return;
  if (errors.size() == 1) throw InternalError(errors[0]);
  std::string msg = std::to_string(errors.size()) + " of " + std::to_string(jobs.size()) +
                    " NVRTC compilations failed:";
  for (const auto& e : errors) msg += "\n  " + e;
  throw InternalError(msg);
}

int number_after(const std::string& line, const std::string& key) {
  auto pos = line.find(key);
  if (pos == std::string::npos) return 0;
  // The number precedes the key: "... 128 bytes smem" / "Used 10 registers".
  size_t end = pos;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  if (begin == end) return 0;
  return std::atoi(line.substr(begin, end - begin).c_str());
}

}  // namespace

std::vector<std::string> nvrtc_options(int arch) {
  return {"--gpu-architecture=sm_" + std::to_string(arch), "--std=c++17", "--fmad=true",
          "--ptxas-options=-v"};
}

std::string nvrtc_version() {
  return nvrtc_toolchain().version;
}

const std::string& cuda_include_dir() {
  static const std::string dir = [] {
    if (const char* env = std::getenv("CUDAToolkit_ROOT"); env && *env) {
      std::string d = std::string(env) + "/include";
      if (std::filesystem::exists(d + "/cuda_fp16.h")) return d;
    }
    return std::string(FUSERC_CUDA_INCLUDE_DIR);
  }();
  return dir;
}

void parse_ptxas_report(const std::string& log, ArchBinary& b) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("registers") != std::string::npos) {
      b.registers = number_after(line, " registers");
      b.shared_bytes = number_after(line, " bytes smem");
    }
    if (line.find("spill stores") != std::string::npos) {
      b.spill_store_bytes = number_after(line, " bytes spill stores");
      b.spill_load_bytes = number_after(line, " bytes spill loads");
      b.local_bytes = number_after(line, " bytes stack frame");
    }
  }
}

void compile_kernels(std::vector<KernelSummary*> kernels, const NvrtcOptions& options) {
  FUSERC_CHECK(!options.archs.empty(), "no architecture to compile for");
  int lowest = *std::min_element(options.archs.begin(), options.archs.end());
  const NvrtcToolchain* toolchain = options.cache ? &nvrtc_toolchain(options.cache) : nullptr;
  std::vector<Job> jobs;
  for (KernelSummary* k : kernels)
    for (int arch : options.archs) {
      Job j{k, arch, arch == lowest, nvrtc_options(arch), {}, {}, false, {}};
      j.options.push_back("-I" + cuda_include_dir());
      if (toolchain)
        j.cache_key = nvrtc_cache_key(k->source, k->name + ".cu", j.options, toolchain->version,
                                      toolchain->identity);
      jobs.push_back(std::move(j));
    }
  if (toolchain) {
    std::vector<std::string> keys;
    for (const Job& j : jobs) keys.push_back(j.cache_key);
    options.cache->prefetch(keys);  // a remote cache behind it is asked for all of them at once
    for (Job& j : jobs) lookup(j, *options.cache);
  }
  compile_misses(jobs, options);
  report_failures(jobs);
  for (KernelSummary* k : kernels) {
    k->binaries.clear();
    k->compile_options = nvrtc_options(lowest);
    k->compile_options.erase(k->compile_options.begin());  // the arch is per binary
    k->ptx_arch = lowest;
  }
  for (auto& j : jobs) {
    j.kernel->binaries.push_back(std::move(j.result.binary));
    if (j.want_ptx) j.kernel->ptx = std::move(j.result.ptx);
  }
  for (KernelSummary* k : kernels)
    std::sort(k->binaries.begin(), k->binaries.end(),
              [](const ArchBinary& a, const ArchBinary& b) { return a.arch < b.arch; });
}

}  // namespace fuserc
