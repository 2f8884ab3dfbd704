#include "serde/reader/program_evaluator.h"

#include <algorithm>

namespace fuserc {
namespace {

inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

}  // namespace

bool evaluate_program(const flatbuffers::Vector<const fb::Instr*>& program, const int64_t* symbols,
                      const DeviceProps& device, int64_t* slots, std::string* error) {
  return evaluate_program_range(program, 0, program.size(), symbols, device, slots, error);
}

bool evaluate_program_range(const flatbuffers::Vector<const fb::Instr*>& program, uint32_t begin,
                            uint32_t end, const int64_t* symbols, const DeviceProps& device,
                            int64_t* slots, std::string* error) {
  const uint32_t n = std::min<uint32_t>(end, program.size());
  for (uint32_t i = begin; i < n; ++i) {
    const fb::Instr* in = program.Get(i);
    int64_t a = 0, b = 0;
    bool ok = true;
    switch (in->op()) {
      case fb::Opcode::Const: slots[i] = in->imm(); continue;
      case fb::Opcode::Symbol: slots[i] = symbols[in->imm()]; continue;
      case fb::Opcode::Device:
        slots[i] = device.value(static_cast<DeviceProp>(in->imm()));
        continue;
      case fb::Opcode::Select:
        slots[i] = slots[in->a()] != 0 ? slots[in->b()] : slots[in->c()];
        continue;
      default: a = slots[in->a()], b = slots[in->b()];
    }
    int64_t r = 0;
    switch (in->op()) {
      case fb::Opcode::Add: ok = !__builtin_add_overflow(a, b, &r); break;
      case fb::Opcode::Sub: ok = !__builtin_sub_overflow(a, b, &r); break;
      case fb::Opcode::Mul: ok = !__builtin_mul_overflow(a, b, &r); break;
      case fb::Opcode::FloorDiv:
      case fb::Opcode::CeilDiv:
      case fb::Opcode::Mod:
        if (b == 0 || (a == INT64_MIN && (b == -1 || in->op() == fb::Opcode::CeilDiv))) {
          if (error) *error = "division by zero or overflow in size slot " + std::to_string(i);
          return false;
        }
        if (in->op() == fb::Opcode::FloorDiv)
          r = floor_div(a, b);
        else if (in->op() == fb::Opcode::Mod)
          r = floor_mod(a, b);
        else
          r = -floor_div(-a, b);
        break;
      case fb::Opcode::Min: r = std::min(a, b); break;
      case fb::Opcode::Max: r = std::max(a, b); break;
      case fb::Opcode::Lt: r = a < b; break;
      case fb::Opcode::Le: r = a <= b; break;
      case fb::Opcode::Eq: r = a == b; break;
      case fb::Opcode::Ne: r = a != b; break;
      default: ok = false;
    }
    if (!ok) {
      if (error) *error = "size arithmetic overflows 64 bits in slot " + std::to_string(i);
      return false;
    }
    slots[i] = r;
  }
  return true;
}

}  // namespace fuserc
