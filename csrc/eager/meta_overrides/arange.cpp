// arange.start_out: its length, checks and out= resize computed here with the
// CPU kernel's own helper (ATen/native/RangeUtils.h). PyTorch's meta kernel
// for it is the Python reference (torch._refs.arange), ~45 us a call, and an
// out= op runs its meta kernel on every call (the length depends on the
// runtime start, end and step): eager decoding paid it at every cache position.
#include "eager/meta_overrides/registry.h"

#include <ATen/Dispatch.h>
#include <ATen/native/RangeUtils.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

// The CPU's dtype dispatch (its error for bool and complex results included).
int64_t arange_length(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step,
                      c10::ScalarType dtype) {
  int64_t length = 0;
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "arange_cpu",
                             [&] { length = at::native::compute_arange_size<scalar_t>(start, end, step); });
  return length;
}

// arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out)
std::vector<c10::IValue> arange_start_out_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& out = stack[first + 3].toTensor();
  const int64_t n = arange_length(stack[first].toScalar(), stack[first + 1].toScalar(),
                                  stack[first + 2].toScalar(), out.scalar_type());
  at::TensorOptions meta = out.options().device(c10::kMeta);
  if (out.numel() == n) return {at::empty(out.sizes(), meta)};  // out keeps its shape, as on the CPU
  if (out.numel() > 0)
    TORCH_WARN("The number of elements in the out tensor of shape ", out.sizes(), " is ", out.numel(),
               " which does not match the computed number of elements ", n,
               ". Note that this may occur as a result of rounding error. "
               "The out tensor will be resized to a tensor of shape (", n, ",).");
  return {at::empty({n}, meta)};
}

const MetaOverrideRegistrar registrar({{"aten::arange.start_out", arange_start_out_meta}});

}  // namespace
}  // namespace torch_tpu::eager
