// Results the meta kernels type or size otherwise than the CPU kernels do.
#include "eager/meta_overrides/registry.h"

#include <ATen/ExpandUtils.h>
#include <ATen/native/TypeProperties.h>
#include <algorithm>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DefaultDtype.h>
#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

c10::ScalarType dtype_of(const torch::jit::Stack& stack, size_t i) { return stack[i].toTensor().scalar_type(); }

// addr(self, vec1, vec2, beta, alpha): the CPU expands self to the result
// before promoting, so a 0-d self promotes like a dimensioned tensor.
std::vector<c10::IValue> addr_meta(const torch::jit::Stack& stack, size_t first) {
  std::vector<c10::IValue> r = default_meta("aten::addr", "", stack, first);
  retype_result(r, 0, c10::promoteTypes(dtype_of(stack, first),
                                        c10::promoteTypes(dtype_of(stack, first + 1), dtype_of(stack, first + 2))));
  return r;
}

// An op whose CPU result has the dtype of its argument `arg` (huber_loss's
// self; the self of mish_backward, mse_loss_backward and
// smooth_l1_loss_backward, where the meta kernels promote with grad/target).
// Only where the computed dtype can be cast to it: for an integral self the
// CPU's functional form refuses a float result (its out= form computes), so
// the promoted dtype stays, which the out= form's rule computes in.
MetaOverride typed_as_arg(const char* name, size_t arg) {
  return retyped_as_arg(arg, [=](const torch::jit::Stack& stack, size_t first) {
    return default_meta(name, "", stack, first);
  });
}

// An op whose CPU result has the promoted dtype of its first two operands:
// pow(bool tensor, bool) stays bool (the meta kernel says int64);
// threshold_backward(grad, self) promotes (the meta kernel keeps grad's).
MetaOverride typed_as_binary(const char* name, const char* overload) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    std::vector<c10::IValue> r = default_meta(name, overload, stack, first);
    retype_result(r, 0, binary_result_type(stack, first));
    return r;
  };
}

// _prelu_kernel_backward(grad, self, weight): on the CPU both gradients have
// the broadcast shape of the three (autograd sums the weight's down); the
// meta kernel gives the weight's gradient self's shape.
std::vector<c10::IValue> prelu_kernel_backward_meta(const torch::jit::Stack& stack, size_t first) {
  check_same_dtype(stack, first, 1, {0, 2}, DtypeMessage::kTensorIterator);  // one dtype, as the CPU's kernel
  std::vector<c10::IValue> r = default_meta("aten::_prelu_kernel_backward", "", stack, first);
  auto shape = at::infer_size_dimvector(stack[first].toTensor().sizes(),
                                        at::infer_size_dimvector(stack[first + 1].toTensor().sizes(),
                                                                 stack[first + 2].toTensor().sizes()));
  for (size_t i : {size_t{0}, size_t{1}}) {
    const at::Tensor& t = r.at(i).toTensor();
    if (t.sizes() != at::IntArrayRef(shape)) r[i] = at::empty(shape, t.options());
  }
  return r;
}

// linspace/logspace into an out= with as many elements as the result (arange
// has its own override, arange.cpp): the CPU keeps out's shape (it resizes
// only on another numel); PyTorch's Python meta kernels resize it to 1-d.
MetaOverride range_into_out(const char* name, const char* overload, size_t out_arg) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    std::vector<c10::IValue> r = default_meta(name, overload, stack, first);
    const at::Tensor& out = stack[first + out_arg].toTensor();
    const at::Tensor& t = r.at(0).toTensor();
    if (t.numel() == out.numel() && t.sizes() != out.sizes())
      r[0] = at::empty_strided(out.sizes(), out.strides(), t.options());
    return r;
  };
}

// geqrf(self) -> (a, tau): PyTorch has no meta kernel. a is self's shape
// (column-major on the CPU, as LAPACK writes it), tau (*batch, min(m, n)).
std::vector<c10::IValue> geqrf_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  TORCH_CHECK(self.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  auto opts = self.options().device(c10::kMeta);
  std::vector<int64_t> tau(self.sizes().begin(), self.sizes().end() - 2);
  tau.push_back(std::min(self.size(-2), self.size(-1)));
  return {at::empty(self.sizes(), opts).mT().contiguous().mT(), at::empty(tau, opts)};
}

// fractional_max_pool3d_backward and the margin losses' backward
// (grad_output, self, ...): no meta kernel either; the gradient has self's
// shape and dtype.
std::vector<c10::IValue> like_self_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first + 1].toTensor();
  return {at::empty(self.sizes(), self.options().device(c10::kMeta))};
}

// multilabel_margin_loss_backward(grad, self, target, reduction, is_target):
// like self, and one dtype for grad, self and is_target, as the CPU's kernel.
std::vector<c10::IValue> multilabel_margin_loss_backward_meta(const torch::jit::Stack& stack, size_t first) {
  check_same_dtype(stack, first, 1, {0, 4}, DtypeMessage::kAccessor);
  const at::Tensor& self = stack[first + 1].toTensor();
  return {at::empty(self.sizes(), self.options().device(c10::kMeta))};
}

// The margin losses: an unbatched (1-d) self gives a 0-d output for
// reduction none on the CPU (the meta kernels: [1]).
MetaOverride unbatched_none_is_0d(const char* name, size_t reduction_arg) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    std::vector<c10::IValue> r = default_meta(name, "", stack, first);
    const at::Tensor& out = r.at(0).toTensor();
    if (stack[first].toTensor().dim() <= 1 && stack[first + reduction_arg].toInt() == 0 && out.numel() == 1)
      r[0] = at::empty({}, out.options());
    return r;
  };
}

// ldexp.Tensor(self, other): the CPU computes self * pow(2.0, other), so a 0-d
// float `other` takes part in the product's promotion as pow's 0-d result
// (an int64 self with a 0-d bfloat16 other gives bfloat16; the meta kernel
// promoted as if other were a wrapped number). A float self with an integral
// other runs the CPU's own kernel, in self's dtype, as the meta kernel says.
std::vector<c10::IValue> ldexp_meta(const torch::jit::Stack& stack, size_t first) {
  std::vector<c10::IValue> r = default_meta("aten::ldexp", "Tensor", stack, first);
  const at::Tensor& self = stack[first].toTensor();
  const at::Tensor& other = stack[first + 1].toTensor();
  if (at::isFloatingType(self.scalar_type()) && at::isIntegralType(other.scalar_type(), /*includeBool=*/false)) return r;
  c10::ScalarType power = at::isFloatingType(other.scalar_type()) || at::isComplexType(other.scalar_type())
                              ? other.scalar_type()
                              : c10::typeMetaToScalarType(c10::get_default_dtype());
  at::Tensor power_like = at::empty(other.sizes(), other.options().dtype(power).device(c10::kMeta));
  retype_result(r, 0, at::result_type(self, power_like));
  return r;
}

// cat.out(tensors, dim, out): the CPU refuses an out= dtype its inputs' common
// dtype cannot be cast to with a TypeError (the meta kernel's is a RuntimeError).
std::vector<c10::IValue> cat_out_meta(const torch::jit::Stack& stack, size_t first) {
  std::vector<at::Tensor> tensors = stack[first].toTensorList().vec();
  const at::Tensor& out = stack[first + 2].toTensor();
  if (!tensors.empty()) {
    c10::ScalarType common = at::native::result_type(tensors);
    TORCH_CHECK_TYPE(c10::canCast(common, out.scalar_type()),
                     "torch.cat(): input types can't be cast to the desired output type ", out.scalar_type());
  }
  return default_meta("aten::cat", "out", stack, first);
}

const MetaOverrideRegistrar registrar{
    {"aten::cat.out", cat_out_meta},
    {"aten::ldexp.Tensor", ldexp_meta},
    {"aten::geqrf", geqrf_meta},
    {"aten::multilabel_margin_loss_forward", unbatched_none_is_0d("aten::multilabel_margin_loss_forward", 2)},
    {"aten::multi_margin_loss", unbatched_none_is_0d("aten::multi_margin_loss", 5)},
    {"aten::fractional_max_pool3d_backward", like_self_meta},
    {"aten::multi_margin_loss_backward", like_self_meta},
    {"aten::multilabel_margin_loss_backward", multilabel_margin_loss_backward_meta},
    {"aten::linspace.out", range_into_out("aten::linspace", "out", 3)},
    {"aten::logspace.out", range_into_out("aten::logspace", "out", 4)},
    {"aten::addr", addr_meta},
    {"aten::huber_loss", typed_as_arg("aten::huber_loss", 0)},
    {"aten::mish_backward", typed_as_arg("aten::mish_backward", 1)},
    {"aten::mse_loss_backward", typed_as_arg("aten::mse_loss_backward", 1)},
    {"aten::smooth_l1_loss_backward", typed_as_arg("aten::smooth_l1_loss_backward", 1)},
    {"aten::pow.Tensor_Scalar", typed_as_binary("aten::pow", "Tensor_Scalar")},
    {"aten::threshold_backward", typed_as_binary("aten::threshold_backward", "")},
    {"aten::_prelu_kernel_backward", prelu_kernel_backward_meta},
};

}  // namespace
}  // namespace torch_tpu::eager
