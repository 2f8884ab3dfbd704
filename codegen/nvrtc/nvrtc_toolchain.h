// Owns the description of the NVRTC fuserc compiles with: its version, the architectures it
// can target, and an identity (the library's GNU build ID, else a hash of its bytes) that every
// compile-cache key includes. With a cache, the description is stored under the library file's path, size,
// modification time and inode, so that a warm compile never loads NVRTC at all.
#pragma once

#include <string>
#include <vector>

namespace fuserc {

class DiskCache;

struct NvrtcToolchain {
  std::string version;               // "13.0"
  std::vector<int> supported_archs;  // ascending: 75, 80, ...
  std::string identity;              // "build-id-<hex>" or a hash; "" when not needed yet
};

// The first call decides for the whole process: with `cache`, a description stored for the
// same library file is reused (and a new one stored); without, NVRTC is loaded and asked.
// Later calls return the same description (computing the identity if it was not needed yet).
// Thread-safe.
const NvrtcToolchain& nvrtc_toolchain(DiskCache* cache = nullptr);

}  // namespace fuserc
