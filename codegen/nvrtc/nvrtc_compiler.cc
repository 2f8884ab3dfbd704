#include "codegen/nvrtc/nvrtc_compiler.h"

#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/base/diagnostics.h"
#include "core/base/file_io.h"

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
  ArchBinary binary;
  std::string ptx;
  std::string error;  // empty on success
};

void run_job(Job& job, const NvrtcOptions& options) {
  const KernelSummary& k = *job.kernel;
  nvrtcProgram prog;
  std::string file = k.name + ".cu";
  if (nvrtcCreateProgram(&prog, k.source.c_str(), file.c_str(), 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    job.error = "nvrtcCreateProgram failed";
    return;
  }
  std::vector<std::string> opts = nvrtc_options(job.arch);
  opts.push_back("-I" + cuda_include_dir());
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) nvrtcGetProgramLog(prog, log.data());
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
    nvrtcDestroyProgram(&prog);
    return;
  }
  parse_ptxas_report(log, job.binary);
  job.binary.arch = job.arch;
  size_t n = 0;
  nvrtcGetCUBINSize(prog, &n);
  job.binary.cubin.resize(n);
  if (n) nvrtcGetCUBIN(prog, job.binary.cubin.data());
  if (job.want_ptx) {
    nvrtcGetPTXSize(prog, &n);
    job.ptx.resize(n);
    if (n) nvrtcGetPTX(prog, job.ptx.data());
    while (!job.ptx.empty() && job.ptx.back() == '\0') job.ptx.pop_back();
  }
  nvrtcDestroyProgram(&prog);
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
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
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
  std::vector<Job> jobs;
  for (KernelSummary* k : kernels)
    for (int arch : options.archs) jobs.push_back(Job{k, arch, arch == lowest, {}, {}, {}});
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) run_job(jobs[i], options);
  };
  int threads = std::max(1, std::min<int>(options.jobs, static_cast<int>(jobs.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& j : jobs)
    if (!j.error.empty()) throw InternalError(j.error);
  for (KernelSummary* k : kernels) {
    k->binaries.clear();
    k->compile_options = nvrtc_options(lowest);
    k->compile_options.erase(k->compile_options.begin());  // the arch is per binary
    k->ptx_arch = lowest;
  }
  for (auto& j : jobs) {
    j.kernel->binaries.push_back(std::move(j.binary));
    if (j.want_ptx) j.kernel->ptx = std::move(j.ptx);
  }
  for (KernelSummary* k : kernels)
    std::sort(k->binaries.begin(), k->binaries.end(),
              [](const ArchBinary& a, const ArchBinary& b) { return a.arch < b.arch; });
}

}  // namespace fuserc
