// Owns writing a compiled fusion as a package (schemas/fuserc_package.fbs): every size the
// runtime needs becomes a slot of one expression program, cubins, PTX and sources go into
// hashed blobs, and the file ends with a checksum trailer over everything else. The bytes
// depend only on the input and the options: no timestamps, no pointer-ordered containers.
#pragma once

#include <string>
#include <vector>

#include "codegen/compile_fusion.h"

namespace fuserc {

struct PackageOptions {
  std::vector<std::string> options;  // the compile options that shaped it, for provenance
};

std::string serialize_package(const CompiledFusion& c, const PackageOptions& options);

// Serializes and writes atomically: on failure nothing is left at `path`.
void write_package(const std::string& path, const CompiledFusion& c, const PackageOptions& options);

}  // namespace fuserc
