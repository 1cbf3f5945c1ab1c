// Key fields beyond the tensors' geometry that a call's program depends on:
// the process-wide state PyTorch's meta kernels and the rules read. Each is
// named so a test can drop it (TORCH_TPU_DEBUG_NARROW_CACHE_KEY=field,...)
// and show that TORCH_TPU_VALIDATE_CACHE=1 catches the gap.
#pragma once
#include <string>

namespace torch_tpu::eager {

enum class KeyField {
  OperandSources,           // per operand: device tensor, 0-d CPU tensor or Python number
  DefaultDtype,             // torch.get_default_dtype(): promotion of Python floats
  DeterministicAlgorithms,  // torch.use_deterministic_algorithms(): kernels may choose by it
};

// False only for fields a test narrowed away on purpose.
bool key_field_enabled(KeyField field);

// Appends the global state every op's key carries.
void key_global_state(std::string& key);

}  // namespace torch_tpu::eager
