// Owns the compiler's own account of what a package holds: the JSON that `fuserc inspect
// --json` must print once the package is written and loaded again, built straight from the
// CompiledFusion (not from the package). The round-trip tests compare the two.
#pragma once

#include <nlohmann/json.hpp>

#include "codegen/compile_fusion.h"

namespace fuserc {

// Every key of package_json() except size_bytes (known only once written).
nlohmann::json compiled_view(const CompiledFusion& c);

}  // namespace fuserc
