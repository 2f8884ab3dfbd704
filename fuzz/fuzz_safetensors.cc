// Fuzz target: the safetensors reader (input files of `run` and `eval`). Bad bytes must be a
// UserError; a tensor read must round-trip through the writer.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/safetensors.h"
#include "fuzz/fuzz_common.h"

int fuserc_fuzz::fuzz_safetensors(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  fuserc::TensorMap tensors;
  try {
    tensors = fuserc::parse_safetensors(bytes, "fuzz.safetensors");
  } catch (const fuserc::UserError&) {
    return 0;
  }
  // What was accepted must serialize and read back (no UserError allowed here).
  std::vector<std::pair<std::string, const fuserc::HostTensor*>> list;
  for (const auto& [name, tensor] : tensors) list.emplace_back(name, &tensor);
  std::string again = fuserc::serialize_safetensors(list);
  fuserc::TensorMap back = fuserc::parse_safetensors(again, "fuzz-roundtrip.safetensors");
  if (back.size() != tensors.size()) fuserc_fuzz::fail("round trip lost tensors");
  return 0;
}

#ifndef FUSERC_FUZZ_REPLAY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuserc_fuzz::fuzz_safetensors(data, size);
}
#endif
