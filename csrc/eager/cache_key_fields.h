// Key fields beyond the tensors' geometry that a call's program depends on:
// the process-wide state PyTorch's meta kernels and the rules read. Each is
// named so a test can drop it (TORCH_TPU_DEBUG_NARROW_CACHE_KEY=field,...)
// and show that TORCH_TPU_VALIDATE_CACHE=1 catches the gap.
#pragma once
#include <optional>
#include <string>

#include "ops/op_call.h"

namespace torch_tpu::eager {

enum class KeyField {
  OperandSources,           // per operand: device tensor, 0-d CPU tensor or Python number
  DefaultDtype,             // torch.get_default_dtype(): promotion of Python floats
  DeterministicAlgorithms,  // torch.use_deterministic_algorithms(): kernels may choose by it
  MatmulPrecision,          // torch.set_float32_matmul_precision(): float32 dots and convolutions
  Float64Rule,              // a TPU platform (or its stand-in): 64-bit scalars travel as f32
};

// False only for fields a test narrowed away on purpose.
bool key_field_enabled(KeyField field);

// The rules' float32 matmul precision: this thread's torch.tpu.precision()
// override if one is active, else torch.get_float32_matmul_precision().
ops::MatmulPrecision matmul_precision();

// Sets (or with nullopt clears) this thread's override.
void set_matmul_precision_override(std::optional<ops::MatmulPrecision> p);
std::optional<ops::MatmulPrecision> matmul_precision_override();

// Appends the global state every op's key carries.
void key_global_state(std::string& key);

}  // namespace torch_tpu::eager
