// Fuzz target: the package loader. Bytes are opened as a package (every check of
// package_reader.h), every blob verified, then the package is bound with shapes taken from the
// end of the input (evaluating its expression program, checking ranges and guards). The head
// checksum is recomputed for 3 inputs in 4 (package_fixup.h). Hostile
// packages must be a UserError; a crash, an InternalError or a sanitizer report is a finding.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/package_fixup.h"
#include "runtime/executable.h"
#include "serde/reader/package_reader.h"

int fuserc_fuzz::fuzz_package(const uint8_t* data, size_t size) {
  // The last 64 bytes (when there are more than that) choose the shapes; the rest is the package.
  size_t tail = size > 256 ? 64 : 0;
  fuserc_fuzz::ByteTail shapes_bytes(data + size - tail, tail);
  std::string bytes(reinterpret_cast<const char*>(data), size - tail);
  // Mostly with the head checksum recomputed (to reach the structure checks and binding).
  if (size % 4 != 0) fuserc_fuzz::fix_head_hash(bytes);
  try {
    auto view = fuserc::PackageView::from_bytes(std::move(bytes), "fuzz.fpkg");
    view->verify_all();
    fuserc::Executable exe(std::move(view));
    // Bind twice: by symbol values and by input shapes.
    std::vector<int64_t> symbols;
    for (const auto& range : exe.symbol_ranges()) {
      // Mostly inside the declared range (to reach the program and the guards), else anything.
      uint64_t span = static_cast<uint64_t>(range.max) - static_cast<uint64_t>(range.min) + 1;
      uint64_t pick = shapes_bytes.take(4);
      if (range.max >= range.min && (pick & 1) == 0)
        symbols.push_back(static_cast<int64_t>(static_cast<uint64_t>(range.min) +
                                               (span ? (pick >> 1) % span : pick >> 1)));
      else
        symbols.push_back(shapes_bytes.size_value());
    }
    try {
      exe.bind(symbols);
    } catch (const fuserc::UserError&) {
    }
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& spec : exe.input_specs()) {
      std::vector<int64_t> shape;
      size_t rank = spec.shape.size();
      if (shapes_bytes.take(1) % 16 == 0) rank = (rank + 1) % 5;  // sometimes the wrong rank
      for (size_t d = 0; d < rank; ++d) shape.push_back(shapes_bytes.size_value());
      shapes.push_back(shape);
    }
    exe.bind_shapes(shapes, "fuzz");
  } catch (const fuserc::UserError&) {
  }
  return 0;
}

#ifndef FUSERC_FUZZ_REPLAY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuserc_fuzz::fuzz_package(data, size);
}
#endif
