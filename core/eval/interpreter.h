// Owns `fuserc eval`: the CPU reference interpreter. It evaluates a Fusion op by op with the
// contract's numerics, kept simple enough to be obviously right, since every generated kernel
// is tested against it:
//   - f16/bf16 values are rounded (to nearest even) only where the contract rounds them: by
//     `cast` and when written as outputs; other f16/bf16 results stay in f32, as they do in a
//     kernel's registers (PyTorch's eager mode would round each op's result, which puts an f32
//     value computed from bf16 math, e.g. cast(gelu(x_bf16)), 2^-9 away from the reference);
//     every other result is stored in its declared dtype; elementwise math on f16/bf16/f32
//     runs in float, on f64 in double, on integers in wrapping 64-bit arithmetic;
//   - reductions of floating-point values accumulate in double (at least the f32 the contract
//     asks for), integer reductions in wrapping 64-bit arithmetic;
//   - rand/randn use the Philox mapping of core/base/philox_impl.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/base/input_binding.h"
#include "core/base/safetensors.h"
#include "core/ir/fusion.h"

namespace fuserc {

// The graph's inputs (constants left out), symbols and binding steps in the form
// bind_symbols takes; `rule_input[k]` maps rules.inputs[k] back to f.inputs.
BindingRules binding_rules(const Fusion& f, std::vector<int>* rule_input = nullptr);

// Binds `f`'s symbols from input tensors read from `inputs_file` (every input there, nothing
// else, every extent matching): their values by name.
SymbolValues bind_fusion_inputs(const Fusion& f, const TensorMap& inputs,
                                const std::string& inputs_file);

// Evaluates the fusion on `inputs` (read from `inputs_file`, named in errors). Returns the
// outputs in the graph's order, each name once.
std::vector<std::pair<std::string, HostTensor>> evaluate_fusion(const Fusion& f,
                                                                const TensorMap& inputs,
                                                                const std::string& inputs_file);

}  // namespace fuserc
