#include "runtime/emulator/emulated_module.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/base/content_hash.h"
#include "core/base/diagnostics.h"
#include "core/base/file_io.h"

extern char** environ;

// The prelude and the stub headers, embedded at build time (cmake/embed_text.cmake); names are
// relative to runtime/.
extern const char* const fuserc_emu_prelude_files[];
extern const char* const fuserc_emu_prelude_files_names[];
extern const std::size_t fuserc_emu_prelude_files_sizes[];
extern const std::size_t fuserc_emu_prelude_files_count;

namespace fuserc::emu {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNoCompiler = "cannot emulate: no host C++ compiler (set FUSERC_HOST_CXX)";
constexpr const char* kPreludeName = "emulator/cuda_emulation.h";
constexpr const char* kStubIncludeDir = "emulator/include";
constexpr int kLogLinesShown = 20;

// Mirrors fuserc_emu::LaunchConfig in cuda_emulation.h (which checks struct_size).
struct LaunchConfig {
  unsigned int struct_size;
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int host_threads;
  unsigned long long dynamic_smem_bytes;
  unsigned long long stack_bytes;
};

// Flags of every emulation build (the paths of the prelude, source and output are added).
// -fwrapv: signed overflow wraps, as on the GPU. -ffp-contract=off: a*b+c is never fused (NVRTC
// fuses by default, so results can differ in the last bit; explicit fmaf/__fmaf_rn agree).
// -fno-strict-aliasing: kernels reinterpret memory (float4 loads, shared memory byte arrays).
// -fno-tree-vectorize: GCC 12's vectorizer (on at -O2) crashes with "unrecognizable insn" on
// some kernels (signbit of float pairs: a V2SF shift), found by scripts/random_graphs.py.
const std::vector<std::string>& compile_flags() {
  static const std::vector<std::string> flags = {"-std=c++17",
                                                 "-O2",
                                                 "-fwrapv",
                                                 "-ffp-contract=off",
                                                 "-fno-strict-aliasing",
                                                 "-fno-math-errno",
                                                 "-fno-tree-vectorize",
                                                 "-fPIC",
                                                 "-shared",
                                                 "-fvisibility=hidden",
                                                 "-pthread",
                                                 "-w"};
  return flags;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// ---- Subprocesses ----

struct ProcessResult {
  bool spawned = false;
  int exit_code = -1;
  std::string output;  // stdout and stderr together (or why it could not be spawned)
};

std::string read_all(int fd) {
  std::string out;
  char buffer[1 << 14];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  ProcessResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.output = std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    result.output = std::strerror(rc);
    return result;
  }
  result.spawned = true;
  result.output = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    out += plain ? a : "'" + a + "'";
  }
  return out;
}

// ---- The host compiler ----

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// `name` itself if it has a slash, else the first match on $PATH; "" if none.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
  const std::string path = env("PATH").empty() ? "/usr/local/bin:/usr/bin:/bin" : env("PATH");
  size_t start = 0;
  for (;;) {
    const size_t end = path.find(':', start);
    std::string dir =
        path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    if (end == std::string::npos) return "";
    start = end + 1;
  }
}

struct Compiler {
  std::string path;
  std::string identity;  // its --version output
};

std::string compiler_identity(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(path);
  if (it != known.end()) return it->second;
  const ProcessResult r = run_process({path, "--version"});
  if (!r.spawned || r.exit_code != 0) {
    throw UserError(std::string(kNoCompiler) + ": " + quote(path) + " --version failed");
  }
  known[path] = r.output;
  return r.output;
}

Compiler resolve_compiler(const BuildOptions& options) {
  std::string requested = options.compiler.empty() ? env("FUSERC_HOST_CXX") : options.compiler;
  Compiler c;
  if (!requested.empty()) {
    c.path = find_program(requested);
    if (c.path.empty())
      throw UserError(std::string(kNoCompiler) + ": " + quote(requested) + " not found");
  } else {
    c.path = find_program("c++");
    if (c.path.empty()) c.path = find_program("g++");
    if (c.path.empty()) throw UserError(kNoCompiler);
  }
  c.identity = compiler_identity(c.path);
  return c;
}

// ---- The cache ----

std::string emu_cache_dir(const BuildOptions& options) {
  std::string root = options.cache_dir;
  if (root.empty()) root = env("FUSERC_CACHE_DIR");
  if (root.empty() && !env("XDG_CACHE_HOME").empty()) root = env("XDG_CACHE_HOME") + "/fuserc";
  if (root.empty() && !env("HOME").empty()) root = env("HOME") + "/.cache/fuserc";
  if (root.empty()) throw UserError("cannot emulate: no cache directory (set FUSERC_CACHE_DIR)");
  return root + "/emu";
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError(SourcePlace{dir}, "cannot create directory: " + ec.message());
}

// Unique temporary names beside the final ones, so that concurrent builds never collide.
std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

struct Prelude {
  std::string hash;    // of every embedded file, names included
  std::string header;  // path of cuda_emulation.h
  std::string include_dir;
};

// Writes the embedded prelude and stub headers into a content-addressed folder of the cache
// (once; each file atomically).
Prelude install_prelude(const std::string& emu_dir) {
  std::string all;
  for (size_t i = 0; i < fuserc_emu_prelude_files_count; ++i) {
    all += fuserc_emu_prelude_files_names[i];
    all += '\0';
    all.append(fuserc_emu_prelude_files[i], fuserc_emu_prelude_files_sizes[i]);
    all += '\0';
  }
  Prelude p;
  p.hash = content_hash_hex(all);
  const std::string dir = emu_dir + "/prelude-" + p.hash;
  for (size_t i = 0; i < fuserc_emu_prelude_files_count; ++i) {
    const std::string path = dir + "/" + fuserc_emu_prelude_files_names[i];
    std::error_code ec;
    if (fs::exists(path, ec)) continue;
    make_directories(fs::path(path).parent_path().string());
    write_file_atomically(
        path, std::string_view(fuserc_emu_prelude_files[i], fuserc_emu_prelude_files_sizes[i]));
  }
  p.header = dir + "/" + kPreludeName;
  p.include_dir = dir + "/" + kStubIncludeDir;
  return p;
}

// ---- Launch shims ----

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// A parameter type without __restrict__ (which g++ rejects in the shim's casts; it does not
// change how the argument is passed).
std::string strip_restrict(const std::string& type) {
  std::string out;
  size_t i = 0;
  while (i < type.size()) {
    if (is_ident_char(type[i])) {
      size_t j = i;
      while (j < type.size() && is_ident_char(type[j])) ++j;
      const std::string word = type.substr(i, j - i);
      if (word != "__restrict__" && word != "__restrict") out += word;
      i = j;
    } else {
      out += type[i++];
    }
  }
  return out;
}

size_t skip_space(const std::string& s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// The first argument of the `__launch_bounds__(...)` written in front of kernel `name`, in
// parentheses, or "(0)" if there is none (the launch then checks only CUDA's fixed limits).
std::string launch_bound_expr(const std::string& src, const std::string& name) {
  static const std::string kKey = "__launch_bounds__";
  for (size_t pos = src.find(kKey); pos != std::string::npos; pos = src.find(kKey, pos + 1)) {
    const size_t open = skip_space(src, pos + kKey.size());
    if (open >= src.size() || src[open] != '(') continue;
    int depth = 0;
    size_t close = open, comma = std::string::npos;
    for (; close < src.size(); ++close) {
      const char c = src[close];
      if (c == '(') ++depth;
      if (c == ')' && --depth == 0) break;
      if (c == ',' && depth == 1 && comma == std::string::npos) comma = close;
    }
    if (close >= src.size()) break;
    // The identifiers after it ("void", the name) up to the parameter list.
    size_t k = close + 1;
    std::string last;
    for (k = skip_space(src, k); k < src.size() && is_ident_char(src[k]); k = skip_space(src, k)) {
      const size_t start = k;
      while (k < src.size() && is_ident_char(src[k])) ++k;
      last = src.substr(start, k - start);
    }
    if (k < src.size() && src[k] == '(' && last == name) {
      const size_t end = comma == std::string::npos ? close : comma;
      return "(" + src.substr(open + 1, end - open - 1) + ")";
    }
  }
  return "(0)";
}

std::string shim_name(const std::string& kernel) {
  return "fuserc_emu_launch_" + kernel;
}

// extern "C" const char* fuserc_emu_launch_K(const LaunchConfig*, void** args): copies the
// arguments out of args and runs K on every CUDA thread of the grid.
std::string make_shim(const KernelSignature& k, const std::string& source) {
  std::ostringstream out;
  out << "extern \"C\" __attribute__((visibility(\"default\"))) const char* " << shim_name(k.name)
      << "(const ::fuserc_emu::LaunchConfig* fuserc_config, void** fuserc_args) {\n"
      << "  (void)fuserc_args;\n";
  std::string call_args;
  for (size_t i = 0; i < k.param_types.size(); ++i) {
    const std::string t = "fuserc_p" + std::to_string(i) + "_t";
    const std::string v = "fuserc_p" + std::to_string(i);
    out << "  typedef " << strip_restrict(k.param_types[i]) << " " << t << ";\n"
        << "  " << t << " " << v << " = *static_cast<" << t << "*>(fuserc_args[" << i << "]);\n";
    call_args += (i ? ", " : "") + v;
  }
  out << "  return ::fuserc_emu::launch(*fuserc_config, static_cast<unsigned int>"
      << launch_bound_expr(source, k.name) << ", [&] { " << k.name << "(" << call_args
      << "); });\n}\n";
  return out.str();
}

std::string make_shims(const std::vector<KernelSignature>& kernels, const std::string& source) {
  std::string shims;
  for (const KernelSignature& k : kernels) {
    FUSERC_CHECK(is_identifier(k.name), "emulation: bad kernel name " + quote(k.name));
    for (const std::string& t : k.param_types) {
      FUSERC_CHECK(t.find_first_of("\n;{}") == std::string::npos,
                   "emulation: bad parameter type " + quote(t) + " of kernel " + k.name);
    }
    shims += make_shim(k, source);
  }
  return shims;
}

// ---- Building ----

// The first n lines of `text`, with a mark when there is more.
std::string first_lines(const std::string& text, int n) {
  size_t pos = 0;
  for (int i = 0; i < n; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos || pos + 1 == text.size()) return text;
    ++pos;
  }
  return text.substr(0, pos) + "[...]";
}

std::string cache_key(const std::string& source, const std::string& shims, const Prelude& prelude,
                      const Compiler& compiler) {
  std::string key = "fuserc-emu-v1";
  for (const std::string* part :
       {&source, &shims, &prelude.hash, &compiler.path, &compiler.identity}) {
    key += '\0' + std::to_string(part->size()) + ':' + *part;
  }
  for (const std::string& flag : compile_flags()) key += '\0' + flag;
  return content_hash_hex(key);
}

// Compiles `text` into `so_path` (atomically: a temporary output renamed into place).
void compile(const std::string& text, const std::string& emu_dir, const std::string& key,
             const Prelude& prelude, const Compiler& compiler, const std::string& so_path,
             bool verbose) {
  const std::string suffix = unique_suffix();
  const std::string src = emu_dir + "/" + key + "." + suffix + ".cc";
  const std::string tmp_so = emu_dir + "/." + key + ".so.tmp." + suffix;
  write_file_atomically(src, text);
  std::vector<std::string> argv = {compiler.path};
  for (const std::string& flag : compile_flags()) argv.push_back(flag);
  for (const std::string& a :
       {std::string("-include"), prelude.header, std::string("-I"), prelude.include_dir,
        std::string("-x"), std::string("c++"), src, std::string("-x"), std::string("none"),
        std::string("-o"), tmp_so, std::string("-Wl,-z,defs"), std::string("-lm")}) {
    argv.push_back(a);
  }
  if (verbose) std::fprintf(stderr, "%s\n", command_line(argv).c_str());
  const ProcessResult r = run_process(argv);
  if (!r.spawned) throw UserError(std::string(kNoCompiler) + ": " + r.output);
  if (r.exit_code != 0 || std::rename(tmp_so.c_str(), so_path.c_str()) != 0) {
    ::unlink(tmp_so.c_str());
    const std::string kept = emu_dir + "/" + key + ".failed.cc";
    std::rename(src.c_str(), kept.c_str());
    throw InternalError(
        "emulation: the host compiler failed on the kernels' CUDA source (kept at " + kept +
        "; compiler " + compiler.path + ", exit status " + std::to_string(r.exit_code) + "):\n" +
        first_lines(r.output, kLogLinesShown));
  }
  ::unlink(src.c_str());
}

}  // namespace

std::unique_ptr<EmulatedModule> EmulatedModule::build(const std::string& source,
                                                      const std::vector<KernelSignature>& kernels,
                                                      const BuildOptions& options) {
  const Compiler compiler = resolve_compiler(options);
  const std::string emu_dir = emu_cache_dir(options);
  make_directories(emu_dir);
  const Prelude prelude = install_prelude(emu_dir);
  const std::string shims = make_shims(kernels, source);
  const std::string key = cache_key(source, shims, prelude, compiler);

  std::unique_ptr<EmulatedModule> m(new EmulatedModule);
  m->library_path_ = emu_dir + "/" + key + ".so";
  std::error_code ec;
  if (fs::exists(m->library_path_, ec)) {
    m->handle_ = ::dlopen(m->library_path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (m->handle_ == nullptr) ::unlink(m->library_path_.c_str());  // damaged: build it again
  }
  if (m->handle_ == nullptr) {
    const std::string text = source + "\n#line 1 \"fuserc_emu_shims\"\n" + shims;
    compile(text, emu_dir, key, prelude, compiler, m->library_path_, options.verbose);
    m->compiled_ = true;
    m->handle_ = ::dlopen(m->library_path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (m->handle_ == nullptr) {
      throw UserError("cannot emulate: cannot load " + m->library_path_ + ": " + ::dlerror() +
                      " (a cache on a noexec file system? set FUSERC_CACHE_DIR)");
    }
  }
  for (const KernelSignature& k : kernels) {
    void* fn = ::dlsym(m->handle_, shim_name(k.name).c_str());
    FUSERC_CHECK(fn != nullptr, "emulation: " + m->library_path_ + " has no " + shim_name(k.name));
    m->kernels_[k.name] = reinterpret_cast<LaunchFn>(fn);
  }
  return m;
}

namespace {

unsigned int emu_threads() {
  const std::string value = env("FUSERC_EMU_THREADS");
  if (value.empty()) {
    const unsigned int n = std::thread::hardware_concurrency();
    return n > 0 ? n : 1;
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long n = std::strtoul(value.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || n == 0 || n > 1024 || value[0] == '-') {
    throw UserError("FUSERC_EMU_THREADS must be a number of threads from 1 to 1024, not " +
                    quote(value));
  }
  return static_cast<unsigned int>(n);
}

}  // namespace

void EmulatedModule::launch(const std::string& kernel, Dim3 grid, Dim3 block,
                            size_t dynamic_smem_bytes, void** args) const {
  auto it = kernels_.find(kernel);
  FUSERC_CHECK(it != kernels_.end(), "emulation: the module has no kernel " + quote(kernel));
  LaunchConfig c{};
  c.struct_size = sizeof c;
  c.grid[0] = grid.x;
  c.grid[1] = grid.y;
  c.grid[2] = grid.z;
  c.block[0] = block.x;
  c.block[1] = block.y;
  c.block[2] = block.z;
  c.host_threads = emu_threads();
  c.dynamic_smem_bytes = dynamic_smem_bytes;
  c.stack_bytes = 0;
  const char* error = it->second(&c, args);
  if (error == nullptr) return;
  const std::string message = error;
  static const std::string kConfig = "config: ", kFault = "fault: ";
  if (message.compare(0, kConfig.size(), kConfig) == 0) {
    throw UserError("kernel " + quote(kernel) +
                    ": cannot launch: " + message.substr(kConfig.size()));
  }
  const size_t skip = message.compare(0, kFault.size(), kFault) == 0 ? kFault.size() : 0;
  throw InternalError("emulation: kernel " + quote(kernel) + " failed: " + message.substr(skip));
}

EmulatedModule::~EmulatedModule() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

}  // namespace fuserc::emu
