// PyTorch's C++ meta functions (at::meta::, the shape, dtype and stride rules
// the CPU's structured kernels run) for common ops whose Meta dispatch key
// PyTorch's Python registrations (torch/_meta_registrations.py, torch._refs)
// took over: those cost 100-400 us a call (add.Tensor 175 us, where the C++
// one costs a few). Meta kernels run on every cache miss, on out= calls the
// memo lacks, and on every cache hit under TORCH_TPU_VALIDATE_CACHE=1, which
// checks each hit against the program its call would build.
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/operator_name.h>
#include <ATen/core/stack.h>

namespace torch_tpu::eager {

// Runs `op`'s meta kernel on `stack` (meta tensors and the call's other
// arguments), leaving its results there: the op's C++ meta function where the
// table has it, else the meta kernel PyTorch registered.
void call_meta_kernel(const c10::OperatorHandle& op, torch::jit::Stack& stack);

}  // namespace torch_tpu::eager
