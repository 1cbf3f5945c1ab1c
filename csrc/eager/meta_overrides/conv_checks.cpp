// The convolution family's checks, in the CPU's order and words. Its rank and
// parameter checks come before any size arithmetic, where the meta kernel
// divides by the stride first (a stride of 0 was a ZeroDivisionError). Then
// dtypes, which the meta kernel never compares (it types the result from the
// input): the CPU raises a RuntimeError for a weight (its accessors' words) or bias
// ("Input type (float) and bias type (double) ...") of another dtype. Its
// transposed 1-d and 2-d kernels (but bfloat16's) take a bias of any dtype.
#include "eager/meta_overrides/registry.h"

#include "eager/dtype_map.h"
#include "ops/torch_dtype_name.h"

#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

bool any_below(const c10::IValue& list, int64_t bound) {
  for (int64_t v : list.toIntVector())
    if (v < bound) return true;
  return false;
}

// convolution / _convolution(input, weight, bias?, stride, padding, dilation,
// transposed, output_padding, groups, ...).
std::vector<c10::IValue> convolution_meta(const char* name, const torch::jit::Stack& stack, size_t first) {
  TORCH_CHECK(stack[first + 1].toTensor().dim() >= 3, "weight should have at least three dimensions");
  TORCH_CHECK(stack[first + 8].toInt() > 0, "non-positive groups is not supported");
  TORCH_CHECK(!any_below(stack[first + 4], 0), "negative padding is not supported");
  TORCH_CHECK(!any_below(stack[first + 7], 0), "negative output_padding is not supported");
  TORCH_CHECK(!any_below(stack[first + 3], 1), "non-positive stride is not supported");
  check_same_dtype(stack, first, 0, {1}, DtypeMessage::kAccessor);
  const at::Tensor& input = stack[first].toTensor();
  const at::Tensor* bias = tensor_arg(stack, first + 2);
  if (bias && bias->scalar_type() != input.scalar_type()) {
    bool transposed = stack[first + 6].toBool();
    if (!transposed)
      TORCH_CHECK(false, "Input type (", ops::cpp_type_name(to_hlo(input.scalar_type())), ") and bias type (",
                  ops::cpp_type_name(to_hlo(bias->scalar_type())), ") should be the same");
    // The transposed kernels that take any bias: 1-d and 2-d, not bfloat16 (oneDNN's).
    if (input.dim() > 4 || input.scalar_type() == c10::kBFloat16)
      check_same_dtype(stack, first, 0, {2}, DtypeMessage::kAccessor);
  }
  return default_meta(name, "", stack, first);
}

const MetaOverrideRegistrar registrar{
    {"aten::convolution",
     [](const torch::jit::Stack& stack, size_t first) { return convolution_meta("aten::convolution", stack, first); }},
    {"aten::_convolution",
     [](const torch::jit::Stack& stack, size_t first) { return convolution_meta("aten::_convolution", stack, first); }},
};

}  // namespace
}  // namespace torch_tpu::eager
