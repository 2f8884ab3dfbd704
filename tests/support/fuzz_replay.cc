// Replays saved fuzz findings in the normal build: every file under DIR/TARGET/ (TARGET one of
// graph, safetensors, expr, package, c_api) is run through that fuzz target's body
// (fuzz/fuzz_TARGET.cc, built without libFuzzer). A finding that is not fixed aborts, crashes
// or throws something other than a UserError, and the test fails.
//   fuzz_replay DIR
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "core/base/file_io.h"
#include "fuzz/fuzz_common.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_replay DIR\n");
    return 2;
  }
  const std::map<std::string, int (*)(const uint8_t*, size_t)> targets = {
      {"graph", fuserc_fuzz::fuzz_graph},     {"safetensors", fuserc_fuzz::fuzz_safetensors},
      {"expr", fuserc_fuzz::fuzz_expr},       {"package", fuserc_fuzz::fuzz_package},
      {"c_api", fuserc_fuzz::fuzz_c_api}};
  int files = 0;
  for (const auto& [name, run] : targets) {
    std::filesystem::path dir = std::filesystem::path(argv[1]) / name;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      std::string bytes = fuserc::read_file(entry.path().string());
      std::printf("%s: %s\n", name.c_str(), entry.path().filename().c_str());
      std::fflush(stdout);
      run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++files;
    }
  }
  std::printf("%d findings replayed, all refused cleanly\n", files);
  return files > 0 ? 0 : 1;
}
