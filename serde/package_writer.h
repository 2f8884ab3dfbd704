// Owns writing a compiled fusion as a package (schemas/fuserc_package.fbs): every size the
// runtime needs becomes a slot of one expression program, cubins, PTX, sources and small
// constants go into hashed blobs, constants of CompiledFusion::external_constant_bytes or more
// into the external data section after the FlatBuffer (serde/package_file.h), and the file
// ends with a checksum trailer over everything else. The bytes
// depend only on the input and the options: no timestamps, no pointer-ordered containers.
#pragma once

#include <string>
#include <vector>

#include "codegen/compile_fusion.h"

namespace fuserc {

struct PackageOptions {
  std::vector<std::string> options;  // the compile options that shaped it, for provenance
};

// The package in memory (constants of any size included: for tests and small packages).
std::string serialize_package(const CompiledFusion& c, const PackageOptions& options);

// Writes the package, streamed (large constants go from their mapped files straight to the
// output, never gathered in memory): on failure nothing is left at `path`. `durable` forces it
// to disk (write_file_atomically); otherwise it is replaced as build outputs are
// (write_file_replacing).
void write_package(const std::string& path, const CompiledFusion& c, const PackageOptions& options,
                   bool durable = true);

}  // namespace fuserc
