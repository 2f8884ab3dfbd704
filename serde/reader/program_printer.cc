#include "serde/reader/program_printer.h"

#include "core/base/device_props.h"

namespace fuserc {
namespace {

enum Prec { kSelect = 1, kCompare = 2, kAdd = 3, kMul = 4, kAtom = 5 };

std::string print(const ProgramView& m, uint32_t slot, int min_prec, int depth) {
  if (depth > 64 || slot >= m.size) return "...";
  const fb::Instr* in = &m.instrs[slot];
  auto sub = [&](uint32_t s, int p) { return print(m, s, p, depth + 1); };
  int prec = kAtom;
  std::string s;
  switch (in->op()) {
    case fb::Opcode::Const:
      s = std::to_string(in->imm());
      if (in->imm() < 0) prec = kMul;
      break;
    case fb::Opcode::Symbol: s = m.symbol_name(in->imm()); break;
    case fb::Opcode::Device: s = device_prop_name(static_cast<DeviceProp>(in->imm())); break;
    case fb::Opcode::Add:
      prec = kAdd;
      s = sub(in->a(), kAdd) + " + " + sub(in->b(), kAdd + 1);
      break;
    case fb::Opcode::Sub:
      prec = kAdd;
      s = sub(in->a(), kAdd) + " - " + sub(in->b(), kAdd + 1);
      break;
    case fb::Opcode::Mul:
      prec = kMul;
      s = sub(in->a(), kMul) + " * " + sub(in->b(), kMul + 1);
      break;
    case fb::Opcode::FloorDiv:
      prec = kMul;
      s = sub(in->a(), kMul) + " / " + sub(in->b(), kMul + 1);
      break;
    case fb::Opcode::Mod:
      prec = kMul;
      s = sub(in->a(), kMul) + " % " + sub(in->b(), kMul + 1);
      break;
    case fb::Opcode::CeilDiv:
      s = "ceildiv(" + sub(in->a(), kSelect) + ", " + sub(in->b(), kSelect) + ")";
      break;
    case fb::Opcode::Min:
      s = "min(" + sub(in->a(), kSelect) + ", " + sub(in->b(), kSelect) + ")";
      break;
    case fb::Opcode::Max:
      s = "max(" + sub(in->a(), kSelect) + ", " + sub(in->b(), kSelect) + ")";
      break;
    case fb::Opcode::Lt:
    case fb::Opcode::Le:
    case fb::Opcode::Eq:
    case fb::Opcode::Ne: {
      prec = kCompare;
      const char* op = in->op() == fb::Opcode::Lt   ? " < "
                       : in->op() == fb::Opcode::Le ? " <= "
                       : in->op() == fb::Opcode::Eq ? " == "
                                                    : " != ";
      s = sub(in->a(), kAdd) + op + sub(in->b(), kAdd);
      break;
    }
    case fb::Opcode::Select:
      prec = kSelect;
      s = sub(in->a(), kCompare) + " ? " + sub(in->b(), kCompare) + " : " + sub(in->c(), kSelect);
      break;
  }
  return prec < min_prec ? "(" + s + ")" : s;
}

}  // namespace

std::string slot_formula(const ProgramView& program, uint32_t slot) {
  return print(program, slot, kSelect, 0);
}

std::string slot_formula(const fb::Metadata& m, uint32_t slot) {
  if (m.program()->size() == 0) return "...";
  ProgramView view{m.program()->Get(0), m.program()->size(), [&m](int64_t i) {
                     return m.symbols()->Get(static_cast<uint32_t>(i))->name()->str();
                   }};
  return print(view, slot, kSelect, 0);
}

}  // namespace fuserc
