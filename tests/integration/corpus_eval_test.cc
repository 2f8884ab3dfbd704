// corpus_eval_test: checks the CPU reference interpreter (`fuserc eval`) against expected
// outputs made by an independent means, the PyTorch oracle of ../shared/tools/oracle.py,
// stored in tests/corpus/ by scripts/make_eval_goldens.py (see tests/corpus/README.md).
//
//   corpus_eval_test FUSERC_BINARY CORPUS_DIR
//
// For every CORPUS_DIR/<name>.<k>.in.safetensors it runs
// `FUSERC_BINARY eval <name>.json --inputs <in> --outputs <tmp>` as a user would, then judges
// each graph output against <name>.<k>.expected.safetensors exactly as oracle.compare does:
// dtype and shape equal; integer and bool outputs exactly equal; float outputs with NaNs in
// the same places, the same infinities, and a relative L2 error over the elements finite in
// both of at most 1e-9 (f64), 2e-5 (f32), 2e-3 (f16) or 1.6e-2 (bf16). Outputs downstream of
// rand/randn (found by following op arguments in the parsed graph) only need the right dtype
// and shape and finite values. Prints one line per case and a summary; exits 1 on any failure.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/host_tensor.h"
#include "core/base/safetensors.h"
#include "core/frontend/graph_parser.h"
#include "core/ir/fusion.h"
#include "core/ir/op_table.h"
#include "tensor_compare.h"

namespace fs = std::filesystem;
using fuserc::DType;
using fuserc::HostTensor;
using fuserc::TensorMap;

namespace {

struct Case {
  std::string name;  // "<graph>.<k>"
  fs::path graph, inputs, expected;
};

// Every `<name>.<k>.in.safetensors` in `dir`, sorted, with its graph and expected outputs.
std::vector<Case> find_cases(const fs::path& dir) {
  const std::string suffix = ".in.safetensors";
  std::vector<Case> cases;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string file = entry.path().filename().string();
    if (file.size() <= suffix.size() ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    Case c;
    c.name = file.substr(0, file.size() - suffix.size());
    std::string graph = c.name.substr(0, c.name.rfind('.'));
    c.graph = dir / (graph + ".json");
    c.inputs = entry.path();
    c.expected = dir / (c.name + ".expected.safetensors");
    cases.push_back(c);
  }
  std::sort(cases.begin(), cases.end(),
            [](const Case& a, const Case& b) { return a.name < b.name; });
  return cases;
}

// Runs `argv` with stdout and stderr sent to `log`; returns its exit status (128 + signal
// when it was killed by one, -1 when it could not be started).
int run_command(const std::vector<std::string>& argv, const fs::path& log) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::perror("execv");
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::string first_line_of(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

// Names of the graph's values that depend on rand/randn (oracle.py's rand_dep): results of a
// random op, and of any op with such a value among its arguments.
std::set<std::string> random_dependent(const fuserc::Fusion& f) {
  std::set<fuserc::ValueId> dep;
  for (const fuserc::Op& op : f.ops) {
    bool d = op.info().group == fuserc::OpGroup::Random;
    for (const fuserc::Operand& a : op.args) {
      if (!a.is_literal() && dep.count(a.value)) d = true;
    }
    if (d) dep.insert(op.outs.begin(), op.outs.end());
  }
  std::set<std::string> names;
  for (fuserc::ValueId v : dep) names.insert(f.value(v).name);
  return names;
}

// Compares one output as oracle.compare does; returns an empty string when it passes, else
// what is wrong.
std::string compare_output(const HostTensor& got, const HostTensor& want, bool random) {
  if (got.dtype() != want.dtype()) {
    return std::string("dtype ") + fuserc::dtype_name(got.dtype()) + ", expected " +
           fuserc::dtype_name(want.dtype());
  }
  if (got.shape() != want.shape()) {
    return "shape " + got.shape_string() + ", expected " + want.shape_string();
  }
  const int64_t n = got.numel();
  if (random) {
    if (!fuserc::is_float(got.dtype())) return "";
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(got.load_f64(i))) {
        return "random output has a non-finite value at element " + std::to_string(i);
      }
    }
    return "";
  }
  return fuserc::testing::compare_tensors(got, want);
}

// Runs one case; returns the problems found (empty when it passes).
std::vector<std::string> check_case(const std::string& fuserc_bin, const Case& c,
                                    const fs::path& work) {
  fuserc::Fusion f = fuserc::parse_fusion_file(c.graph.string());
  fs::path out = work / (c.name + ".out.safetensors");
  fs::path log = work / (c.name + ".log");
  int rc = run_command({fuserc_bin, "eval", c.graph.string(), "--inputs", c.inputs.string(),
                        "--outputs", out.string()},
                       log);
  if (rc != 0 || !fs::exists(out)) {
    return {"fuserc eval exited with " + std::to_string(rc) + ": " + first_line_of(log)};
  }
  TensorMap got = fuserc::read_safetensors(out.string());
  TensorMap want = fuserc::read_safetensors(c.expected.string());
  std::set<std::string> random = random_dependent(f);
  std::vector<std::string> problems;
  std::set<std::string> seen;
  for (fuserc::ValueId id : f.outputs) {
    const std::string& name = f.value(id).name;
    if (!seen.insert(name).second) continue;
    auto w = want.find(name);
    if (w == want.end()) {
      problems.push_back("output " + name + ": not in the expected file");
      continue;
    }
    auto g = got.find(name);
    if (g == got.end()) {
      problems.push_back("output " + name + ": missing from outputs");
      continue;
    }
    std::string why = compare_output(g->second, w->second, random.count(name) > 0);
    if (!why.empty()) problems.push_back("output " + name + ": " + why);
  }
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FUSERC_BINARY CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string fuserc_bin = fs::absolute(argv[1]).string();
  const fs::path dir = argv[2];
  std::vector<Case> cases;
  try {
    cases = find_cases(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corpus eval: cannot list %s: %s\n", dir.c_str(), e.what());
    return 1;
  }
  if (cases.empty()) {
    std::fprintf(stderr, "corpus eval: no *.in.safetensors cases in %s\n", dir.c_str());
    return 1;
  }

  std::string tmpl = (fs::temp_directory_path() / "corpus_eval_XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    std::perror("corpus eval: mkdtemp");
    return 1;
  }
  const fs::path work = buf.data();

  int failed = 0;
  for (const Case& c : cases) {
    std::vector<std::string> problems;
    try {
      problems = check_case(fuserc_bin, c, work);
    } catch (const std::exception& e) {
      problems = {e.what()};
    }
    if (problems.empty()) {
      std::printf("ok  %s\n", c.name.c_str());
    } else {
      ++failed;
      std::string all;
      for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
      std::printf("FAIL %s: %s\n", c.name.c_str(), all.c_str());
    }
    std::fflush(stdout);
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  std::printf("corpus eval: %zu cases, %d failed\n", cases.size(), failed);
  return failed == 0 ? 0 : 1;
}
