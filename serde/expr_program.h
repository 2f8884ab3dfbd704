// Owns turning symbolic expressions into the package's expression program: one flat,
// topologically ordered array of integer instructions over int64 slots, with common
// subexpressions shared (every distinct expression gets one slot). A device property
// ("device.sm_count", core/schedule/device_model.h) becomes a Device instruction.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/expr/expr.h"
#include "fuserc/fuserc_package_generated.h"

namespace fuserc {

class ProgramBuilder {
 public:
  // `symbols` are the graph's symbols in package order (their index is the Symbol operand).
  explicit ProgramBuilder(std::vector<std::string> symbols);

  // The slot holding `e` (emitting the instructions it needs).
  uint32_t slot(const Expr& e);

  const std::vector<fb::Instr>& instructions() const { return instrs_; }

 private:
  std::vector<std::string> symbols_;
  std::vector<fb::Instr> instrs_;
  std::unordered_map<Expr, uint32_t, ExprHash> slots_;
  std::unordered_map<int64_t, uint32_t> constants_;

  uint32_t emit(fb::Opcode op, uint32_t a, uint32_t b, uint32_t c, int64_t imm);
  uint32_t constant(int64_t v);
};

}  // namespace fuserc
