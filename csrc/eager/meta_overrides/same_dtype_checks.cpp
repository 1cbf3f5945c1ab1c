// Ops whose CPU kernels take one dtype for all their tensors (a TensorIterator
// without type promotion, or typed accessors) and raise a RuntimeError on
// mixed dtypes, where PyTorch's meta kernels promote: tpu raises as the CPU.
// Each entry: the argument whose dtype the others must have, the arguments
// checked (in the order the CPU names the first that differs), the message.
#include "eager/meta_overrides/registry.h"

namespace torch_tpu::eager {
namespace {

constexpr DtypeMessage kTensorIterator = DtypeMessage::kTensorIterator, kAccessor = DtypeMessage::kAccessor;

MetaOverride same_dtype(const char* name, const char* overload, size_t ref, std::vector<size_t> args,
                        DtypeMessage style) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    // The meta kernel first: the CPU checks dims and shapes before dtypes
    // (a bad dim with mixed dtypes is its IndexError).
    std::vector<c10::IValue> r = default_meta(name, overload, stack, first);
    check_same_dtype(stack, first, ref, args, style);
    return r;
  };
}

// complex(real, imag) and polar(abs, angle): the CPU takes two tensors of one
// of Half, Float or Double (RuntimeErrors; the meta kernel's reference
// asserts, an AssertionError, and takes bfloat16).
MetaOverride complex_parts(const char* name) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    c10::ScalarType a = stack[first].toTensor().scalar_type(), b = stack[first + 1].toTensor().scalar_type();
    auto ok = [](c10::ScalarType t) { return t == c10::kHalf || t == c10::kFloat || t == c10::kDouble; };
    TORCH_CHECK(ok(a) && ok(b), "Expected both inputs to be Half, Float or Double tensors but got ", a, " and ", b);
    TORCH_CHECK(a == b, "Expected object of scalar type ", a, " but got scalar type ", b, " for second argument");
    return default_meta(name, "", stack, first);
  };
}

const MetaOverrideRegistrar registrar{
    {"aten::complex", complex_parts("aten::complex")},
    {"aten::polar", complex_parts("aten::polar")},
    {"aten::huber_loss_backward", same_dtype("aten::huber_loss_backward", "", 1, {1, 2, 0}, kTensorIterator)},
    // The CPU multiplies by the weight in place (loss.mul_(weight)): a weight
    // of a wider dtype does not widen the result, as the meta kernel's does.
    {"aten::binary_cross_entropy", retyped_as_arg(0, same_dtype("aten::binary_cross_entropy", "", 0, {1}, kTensorIterator))},
    {"aten::binary_cross_entropy_backward",
     retyped_as_arg(1, same_dtype("aten::binary_cross_entropy_backward", "", 0, {1, 2}, kTensorIterator))},
    {"aten::log_sigmoid_backward", same_dtype("aten::log_sigmoid_backward", "", 1, {0, 2}, kTensorIterator)},
    {"aten::_prelu_kernel", same_dtype("aten::_prelu_kernel", "", 0, {1}, kTensorIterator)},
    {"aten::glu_backward", same_dtype("aten::glu_backward", "", 1, {0}, kTensorIterator)},
    {"aten::_softmax_backward_data", same_dtype("aten::_softmax_backward_data", "", 0, {1}, kAccessor)},
    {"aten::_log_softmax_backward_data", same_dtype("aten::_log_softmax_backward_data", "", 0, {1}, kAccessor)},
    {"aten::reflection_pad1d_backward", same_dtype("aten::reflection_pad1d_backward", "", 0, {1}, kAccessor)},
    {"aten::reflection_pad2d_backward", same_dtype("aten::reflection_pad2d_backward", "", 0, {1}, kAccessor)},
    {"aten::reflection_pad3d_backward", same_dtype("aten::reflection_pad3d_backward", "", 0, {1}, kAccessor)},
    {"aten::replication_pad1d_backward", same_dtype("aten::replication_pad1d_backward", "", 0, {1}, kAccessor)},
    {"aten::replication_pad2d_backward", same_dtype("aten::replication_pad2d_backward", "", 0, {1}, kAccessor)},
    {"aten::replication_pad3d_backward", same_dtype("aten::replication_pad3d_backward", "", 0, {1}, kAccessor)},
    {"aten::nll_loss_forward", same_dtype("aten::nll_loss_forward", "", 0, {2}, kAccessor)},
    {"aten::nll_loss_backward", same_dtype("aten::nll_loss_backward", "", 1, {0, 3, 6}, kAccessor)},
    {"aten::nll_loss2d_forward", same_dtype("aten::nll_loss2d_forward", "", 0, {2}, kAccessor)},
    {"aten::nll_loss2d_backward", same_dtype("aten::nll_loss2d_backward", "", 1, {0, 3, 6}, kAccessor)},
    {"aten::linalg_cross", same_dtype("aten::linalg_cross", "", 0, {1}, kAccessor)},
};

}  // namespace
}  // namespace torch_tpu::eager
