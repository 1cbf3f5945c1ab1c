// A pointwise op's out= tensors of another dtype than its result: raises
// as the CPU's kernel does for the same dtypes (out_dtype_check.cpp).
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace torch_tpu::eager {

// `target`: the first written tensor, whose shape an elementwise call's tensors share.
void check_out_dtypes_like_cpu(const c10::OperatorHandle& handle, const torch::jit::Stack& stack, size_t first,
                               size_t nargs, const at::Tensor& target);

}  // namespace torch_tpu::eager
