// Owns printing the slots of a package's expression program as formulas over the symbols
// ("ceildiv(N * 1024, 1024)"), for `fuserc inspect`. Reads only the package.
#pragma once

#include <cstdint>
#include <string>

#include "fuserc/fuserc_package_generated.h"

namespace fuserc {

std::string slot_formula(const fb::Metadata& m, uint32_t slot);

}  // namespace fuserc
