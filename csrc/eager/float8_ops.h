// Which ops take float8 tensors: PyTorch's CPU kernels for float8_e4m3fn and
// float8_e5m2 are a short list (storage, casts, copies, selection,
// comparisons, _scaled_mm); every other op raises NotImplementedError there,
// and does here too, instead of computing in an 8-bit type.
#pragma once
#include <ATen/core/function_schema.h>
#include <ATen/core/stack.h>

namespace torch_tpu::eager {

// Raises NotImplementedError, naming the op and dtype, when a tensor argument
// is float8 and the op is not one the CPU runs on float8.
void check_float8_support(const c10::FunctionSchema& schema, const torch::jit::Stack& stack, size_t first);

}  // namespace torch_tpu::eager
