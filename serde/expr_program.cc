#include "serde/expr_program.h"

#include <algorithm>

#include "core/base/diagnostics.h"
#include "core/schedule/device_model.h"

namespace fuserc {

ProgramBuilder::ProgramBuilder(std::vector<std::string> symbols) : symbols_(std::move(symbols)) {}

uint32_t ProgramBuilder::emit(fb::Opcode op, uint32_t a, uint32_t b, uint32_t c, int64_t imm) {
  instrs_.emplace_back(op, a, b, c, imm);
  return static_cast<uint32_t>(instrs_.size() - 1);
}

uint32_t ProgramBuilder::constant(int64_t v) {
  auto it = constants_.find(v);
  if (it != constants_.end()) return it->second;
  uint32_t s = emit(fb::Opcode::Const, 0, 0, 0, v);
  constants_.emplace(v, s);
  return s;
}

uint32_t ProgramBuilder::slot(const Expr& e) {
  if (e.is_const()) return constant(e.value());
  if (auto it = slots_.find(e); it != slots_.end()) return it->second;
  uint32_t s = 0;
  auto binary = [&](fb::Opcode op) {
    uint32_t a = slot(e.args()[0]);
    uint32_t b = slot(e.args()[1]);
    return emit(op, a, b, 0, 0);
  };
  switch (e.op()) {
    case ExprOp::Const: break;
    case ExprOp::Sym: {
      FUSERC_CHECK(!e.is_index(), "index variable '" + e.name() + "' in a package expression");
      if (auto prop = device_prop_of(e.name())) {
        s = emit(fb::Opcode::Device, 0, 0, 0, static_cast<int64_t>(*prop));
        break;
      }
      auto it = std::find(symbols_.begin(), symbols_.end(), e.name());
      FUSERC_CHECK(it != symbols_.end(),
                   "unknown symbol '" + e.name() + "' in a package expression");
      s = emit(fb::Opcode::Symbol, 0, 0, 0, it - symbols_.begin());
      break;
    }
    case ExprOp::Add: {
      s = slot(e.args()[0]);
      for (size_t i = 1; i < e.args().size(); ++i)
        s = emit(fb::Opcode::Add, s, slot(e.args()[i]), 0, 0);
      if (e.value() != 0) s = emit(fb::Opcode::Add, s, constant(e.value()), 0, 0);
      break;
    }
    case ExprOp::Mul: {
      s = slot(e.args()[0]);
      for (size_t i = 1; i < e.args().size(); ++i)
        s = emit(fb::Opcode::Mul, s, slot(e.args()[i]), 0, 0);
      if (e.value() != 1) s = emit(fb::Opcode::Mul, s, constant(e.value()), 0, 0);
      break;
    }
    case ExprOp::FloorDiv: s = binary(fb::Opcode::FloorDiv); break;
    case ExprOp::CeilDiv: s = binary(fb::Opcode::CeilDiv); break;
    case ExprOp::Mod: s = binary(fb::Opcode::Mod); break;
    case ExprOp::Min: s = binary(fb::Opcode::Min); break;
    case ExprOp::Max: s = binary(fb::Opcode::Max); break;
    case ExprOp::Lt: s = binary(fb::Opcode::Lt); break;
    case ExprOp::Le: s = binary(fb::Opcode::Le); break;
    case ExprOp::Eq: s = binary(fb::Opcode::Eq); break;
    case ExprOp::Ne: s = binary(fb::Opcode::Ne); break;
    case ExprOp::Select: {
      uint32_t c = slot(e.args()[0]);
      uint32_t t = slot(e.args()[1]);
      uint32_t f = slot(e.args()[2]);
      s = emit(fb::Opcode::Select, c, t, f, 0);
      break;
    }
  }
  slots_.emplace(e, s);
  return s;
}

}  // namespace fuserc
