// Owns printing the slots of an expression program as formulas over the symbols
// ("ceildiv(N * 1024, 1024)"), for `fuserc inspect` and the compiler's view of a package.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "fuserc/fuserc_package_generated.h"

namespace fuserc {

struct ProgramView {
  const fb::Instr* instrs;
  size_t size;
  std::function<std::string(int64_t)> symbol_name;
};

std::string slot_formula(const ProgramView& program, uint32_t slot);
std::string slot_formula(const fb::Metadata& m, uint32_t slot);

}  // namespace fuserc
