// Whether a pointwise op's out= tensors may have another dtype than its
// result is each CPU kernel's own business: most cast the result (sin,
// add), but those whose TensorIterator wants one dtype throughout (neg,
// round, clamp and hardtanh, the activations built as unary ops) raise
// "Found dtype Double but expected Float". PyTorch's meta kernels (some of
// them Python decompositions) cast for all, so they cannot tell. The CPU
// kernel itself can, on empty tensors of the same dtypes: it checks dtypes
// before it reads a value, and an empty call costs nothing. Asked only when
// a program is built (dtypes are in the program key) and an out= dtype
// differs from the result's.
#include "eager/out_dtype_check.h"

#include "eager/argument_kinds.h"

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace torch_tpu::eager {
namespace {

at::Tensor empty_cpu_like(const at::Tensor& t) {
  // the same rank, every dim 0: 0-d stays 0-d (it ranks lower in type
  // promotion), and a wrapped number stays one
  at::Tensor e = at::empty(std::vector<int64_t>(t.dim(), 0), at::TensorOptions().dtype(t.scalar_type()));
  if (t.unsafeGetTensorImpl()->is_wrapped_number()) e.unsafeGetTensorImpl()->set_wrapped_number(true);
  return e;
}

// An elementwise call: every tensor argument shaped as the first written one
// or 0-d (pointwise ops, activations and their backward), so the empty call
// is one the kernel handles; other ops are not asked.
bool elementwise_shaped(const torch::jit::Stack& stack, size_t first, size_t nargs, const at::Tensor& target) {
  for (size_t i = 0; i < nargs; ++i) {
    const c10::IValue& v = stack[first + i];
    if (!v.isTensor() || !v.toTensor().defined()) continue;
    const at::Tensor& t = v.toTensor();
    if (t.dim() != 0 && t.sizes() != target.sizes()) return false;
  }
  return true;
}

// The CPU's refusals of mixed dtypes (TensorIterator's same-dtype check,
// its unsafe output cast, typed kernels' own check).
bool is_dtype_refusal(const std::string& msg) {
  return msg.find("Found dtype") != std::string::npos ||
         msg.find("can't be cast to the desired output type") != std::string::npos ||
         msg.find("expected scalar type") != std::string::npos;
}

}  // namespace

void check_out_dtypes_like_cpu(const c10::OperatorHandle& handle, const torch::jit::Stack& stack, size_t first,
                               size_t nargs, const at::Tensor& target) {
  if (!handle.hasTag(at::Tag::pointwise) && !elementwise_shaped(stack, first, nargs, target)) return;
  torch::jit::Stack cpu;
  for (size_t i = 0; i < nargs; ++i) {
    const c10::IValue& v = stack[first + i];
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      cpu.emplace_back(t.defined() ? c10::IValue(empty_cpu_like(t)) : v);
    } else if (is_tensors_list(v)) {
      return;  // tensor lists are no pointwise op's arguments
    } else {
      cpu.push_back(v);
    }
  }
  try {
    handle.callBoxed(cpu);
  } catch (const c10::Error& e) {
    if (is_dtype_refusal(e.what_without_backtrace())) throw;
  }
}

}  // namespace torch_tpu::eager
