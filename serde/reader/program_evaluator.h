// Owns evaluating a package's expression program: one pass over the instructions, writing
// int64 slots in place (no allocation), with floor division, floor modulo and checked
// arithmetic. Overflow or division by zero is reported, never undefined behaviour.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/device_props.h"
#include "fuserc/fuserc_package_generated.h"

namespace fuserc {

// Evaluates `program` with the given symbol values and device properties into `slots`
// (program->size() entries). Returns false and sets `error` (naming the slot) on overflow or
// division by zero.
bool evaluate_program(const flatbuffers::Vector<const fb::Instr*>& program, const int64_t* symbols,
                      const DeviceProps& device, int64_t* slots, std::string* error);
// The same for instructions [begin, end) only (the earlier slots already evaluated): a
// binding evaluates the prefix a Solve step needs before the symbols it solves are known.
bool evaluate_program_range(const flatbuffers::Vector<const fb::Instr*>& program, uint32_t begin,
                            uint32_t end, const int64_t* symbols, const DeviceProps& device,
                            int64_t* slots, std::string* error);

}  // namespace fuserc
