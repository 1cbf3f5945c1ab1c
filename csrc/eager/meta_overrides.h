// Output geometry computed here instead of by PyTorch's meta kernel, for the
// few ops whose meta kernels reject inputs the CPU (and tpu) accept.
#pragma once
#include <ATen/core/stack.h>
#include <ATen/core/operator_name.h>

#include <functional>
#include <vector>

namespace torch_tpu::eager {

// Results as meta tensors, from the call's arguments stack[first...].
using MetaOverride = std::function<std::vector<c10::IValue>(const torch::jit::Stack& stack, size_t first)>;

const MetaOverride* find_meta_override(const c10::OperatorName& op);

}  // namespace torch_tpu::eager
