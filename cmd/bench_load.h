// Owns `fuserc bench PACKAGE.fpkg` (without --gpu): what opening a package costs a program,
// whatever it holds (kernels only, or gigabytes of constants): loading it to a ready
// Executable, the resident memory that adds, binding a new shape, and the first use of its
// constants (mapped and hashed; what a first bind pays before uploading them).
#pragma once

#include <string>

namespace fuserc::cmd {

struct LoadBenchOptions {
  std::string package;
  int runs = 200;
  bool json = false;
};

void run_load_bench(const LoadBenchOptions& o);

}  // namespace fuserc::cmd
