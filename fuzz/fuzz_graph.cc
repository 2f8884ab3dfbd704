// Fuzz target: the graph front end. JSON text (FUSION_FORMAT.md) to a validated Fusion. Bad
// input must be a UserError; an InternalError or a crash is a finding.
#include <cstdint>
#include <string_view>

#include "core/base/diagnostics.h"
#include "core/base/json_reader.h"
#include "core/frontend/graph_parser.h"
#include "fuzz/fuzz_common.h"

int fuserc_fuzz::fuzz_graph(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    fuserc::JsonDocument doc = fuserc::read_json(text, "fuzz.json");
    fuserc::Fusion fusion = fuserc::parse_fusion(doc);
    (void)fusion;
  } catch (const fuserc::UserError&) {
  }
  return 0;
}

#ifndef FUSERC_FUZZ_REPLAY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuserc_fuzz::fuzz_graph(data, size);
}
#endif
