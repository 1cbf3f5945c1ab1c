// The one generic boxed kernel behind every natively lowered ATen op.
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>

namespace torch_tpu::eager {

// Registers the boxed kernel for PrivateUse1 under every op that has a
// lowering rule (and its in-place / out= forms that name a rule). Called once
// at module load, after every rule has registered itself.
void register_lowered_ops();

// The visible CPU fallback (cpu_fallback.cpp), also used for ops whose output
// shape depends on values.
void run_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// x[mask]: boolean indices become integer coordinates (nonzero.cpp).
bool has_mask_index(const c10::List<std::optional<at::Tensor>>& indices);
at::Tensor index_by_masks(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices);

// Routes torch._foreach_* ops to their per-tensor loops (foreach_ops.cpp).
void register_foreach_ops();

}  // namespace torch_tpu::eager
