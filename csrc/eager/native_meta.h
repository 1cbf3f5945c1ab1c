// PyTorch's C++ meta functions (at::meta::, the shape, dtype and stride rules
// the CPU's structured kernels run) for common ops whose Meta dispatch key
// PyTorch's Python registrations (torch/_meta_registrations.py, torch._refs)
// took over: those cost 100-400 us a call (add.Tensor 175 us, where the C++
// one costs a few). Meta kernels run on every cache miss, on out= calls the
// memo lacks, and on every cache hit under TORCH_TPU_VALIDATE_CACHE=1, which
// checks each hit against the program its call would build.
#pragma once
#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/operator_name.h>

namespace torch_tpu::eager {

// The op's C++ meta function as a boxed kernel (called with meta tensors and
// the call's other arguments), or null: run PyTorch's registered meta kernel.
const c10::KernelFunction* find_native_meta(const c10::OperatorName& op);

}  // namespace torch_tpu::eager
