// The batch, group and layer norm families: parameter checks and exception
// types as the CPU's, and its empty statistics in evaluation; layer norm's
// statistics dtype.
#include "eager/meta_overrides/registry.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <initializer_list>
#include <stdexcept>
#include <string>

namespace torch_tpu::eager {
namespace {

// The normalization families' parameters (`params`, those left out null),
// checked for dtype as the CPU checks them: when the first has another dtype
// than the input the call is "mixed", and every parameter must be float32 and
// the input bfloat16 or half; otherwise each must have the input's dtype.
void check_norm_param_dtypes(const at::Tensor& input, std::initializer_list<const at::Tensor*> params) {
  auto in_dt = input.scalar_type();
  const at::Tensor* lead = nullptr;
  for (auto* p : params) if (p && !lead) lead = p;
  if (lead && lead->scalar_type() != in_dt) {
    for (auto* p : params)
      TORCH_CHECK(!p || p->scalar_type() == c10::kFloat, "mixed dtype (CPU): expect parameter to have scalar type of Float");
    TORCH_CHECK(in_dt == c10::kBFloat16 || in_dt == c10::kHalf, "mixed dtype (CPU): all inputs must share same datatype.");
  } else {
    for (auto* p : params)
      TORCH_CHECK(!p || p->scalar_type() == in_dt, "expected scalar type ", in_dt, " but found ", p->scalar_type());
  }
}

// The batch_norm family's parameters (weight, bias, running_mean,
// running_var at stack[first + 1..4]): dtypes as above. The CPU's kernel does
// not check sizes (it reads past a short weight); here each must hold one
// value per channel, as torch.batch_norm requires.
void check_batch_norm_params(const char* name, const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& input = stack[first].toTensor();
  static const char* labels[] = {"weight", "bias", "running_mean", "running_var"};
  const at::Tensor* params[4];
  for (size_t i = 0; i < 4; ++i) params[i] = tensor_arg(stack, first + 1 + i);
  check_norm_param_dtypes(input, {params[0], params[1], params[2], params[3]});
  int64_t channels = input.size(1);
  for (size_t i = 0; i < 4; ++i) {
    const at::Tensor* p = params[i];
    if (!p) continue;
    TORCH_CHECK(i < 2 || p->dim() == 1, name, ": expected ", labels[i], " to be 1-d, got shape ", p->sizes());
    TORCH_CHECK(p->numel() == channels, name, ": ", labels[i], " should contain ", channels, " elements not ",
                p->numel(), " (input shape ", input.sizes(), ")");
  }
}

// save_mean / save_invstd's dtype on the CPU: the input's, float32 for a
// mixed call (a parameter of another dtype; checked above).
c10::ScalarType batch_norm_stats_dtype(const torch::jit::Stack& stack, size_t first) {
  c10::ScalarType in_dt = stack[first].toTensor().scalar_type();
  for (size_t i = 1; i <= 4; ++i)
    if (const at::Tensor* p = tensor_arg(stack, first + i)) return p->scalar_type() != in_dt ? c10::kFloat : in_dt;
  return in_dt;
}

// A 0-d input makes the CPU's kernel fail to size a vector: a C++
// std::length_error, which Python sees as a ValueError through torch.ops and a
// RuntimeError through torch.native_batch_norm; the same exception type here
// gives the same Python type on every path. A 1-d one fails on dim 1 (IndexError).
void check_batch_norm_input_rank(const char* name, const at::Tensor& input) {
  if (input.dim() == 0)
    throw std::length_error(std::string(name) + ": expected an input with at least 2 dims, got a 0-d tensor");
  TORCH_CHECK_INDEX(input.dim() > 1, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

// The batch_norm family, checked like the CPU (above); in evaluation the CPU returns empty save_mean/save_invstd ([0]) where the meta kernel has [C].
// Their dtype is the input's (float32 only for a mixed call), where the meta
// kernel has the accumulation type for half inputs, as CUDA does.
MetaOverride batch_norm_meta(const char* name, const char* overload, int training_arg) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    const at::Tensor& input = stack[first].toTensor();
    check_batch_norm_input_rank(name, input);
    check_batch_norm_params(name, stack, first);
    std::vector<c10::IValue> r = default_meta(name, overload, stack, first);
    bool training;
    if (training_arg >= 0) {
      training = stack[first + training_arg].toBool();
    } else if (training_arg == -2) {  // _batch_norm_no_update: batch statistics without running stats
      training = !tensor_arg(stack, first + 3) && !tensor_arg(stack, first + 4);
    } else {
      training = false;
    }
    c10::ScalarType stats = batch_norm_stats_dtype(stack, first);
    for (size_t i : {size_t{1}, size_t{2}}) {
      const at::Tensor& t = r.at(i).toTensor();
      r[i] = training ? at::empty(t.sizes(), t.options().dtype(stats)) : at::empty({0}, t.options().dtype(stats));
    }
    return r;
  };
}

// native_group_norm(input, weight?, bias?, N, C, HxW, group, eps): the CPU
// checks the affine parameters (RuntimeError) before the meta kernel indexes them.
std::vector<c10::IValue> group_norm_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& input = stack[first].toTensor();
  int64_t C = stack[first + 4].toInt();
  for (size_t i : {size_t{1}, size_t{2}}) {
    const at::Tensor* p = tensor_arg(stack, first + i);
    TORCH_CHECK(!p || (p->dim() == 1 && p->numel() == C), "Expected ", i == 1 ? "weight" : "bias",
                " to be a vector of size equal to the number of channels in input, but got ",
                i == 1 ? "weight" : "bias", " of shape ", p ? p->sizes() : at::IntArrayRef{}, " and input of shape ",
                input.sizes());
  }
  check_norm_param_dtypes(input, {tensor_arg(stack, first + 1), tensor_arg(stack, first + 2)});
  return default_meta("aten::native_group_norm", "", stack, first);
}

// native_layer_norm(input, normalized_shape, weight?, bias?, eps): the CPU keeps
// mean and rstd in the input's dtype unless the call is "mixed" (a parameter
// of another dtype, then float32); the meta kernel types them as the
// accumulation type (float32 for bfloat16/half), as CUDA does.
std::vector<c10::IValue> layer_norm_meta(const torch::jit::Stack& stack, size_t first) {
  std::vector<c10::IValue> r = default_meta("aten::native_layer_norm", "", stack, first);
  const at::Tensor& input = stack[first].toTensor();
  check_norm_param_dtypes(input, {tensor_arg(stack, first + 2), tensor_arg(stack, first + 3)});
  const at::Tensor* param = tensor_arg(stack, first + 2);
  if (!param) param = tensor_arg(stack, first + 3);
  c10::ScalarType stats = param && param->scalar_type() != input.scalar_type() ? c10::kFloat : input.scalar_type();
  retype_result(r, 1, stats);
  retype_result(r, 2, stats);
  return r;
}

const MetaOverrideRegistrar registrar{
    {"aten::native_layer_norm", layer_norm_meta},
    {"aten::native_batch_norm", batch_norm_meta("aten::native_batch_norm", "", 5)},
    {"aten::_native_batch_norm_legit", batch_norm_meta("aten::_native_batch_norm_legit", "", 5)},
    // (input, weight, bias, training, momentum, eps): no running statistics.
    {"aten::_native_batch_norm_legit.no_stats", batch_norm_meta("aten::_native_batch_norm_legit", "no_stats", 3)},
    {"aten::_native_batch_norm_legit_functional", batch_norm_meta("aten::_native_batch_norm_legit_functional", "", 5)},
    {"aten::_native_batch_norm_legit_no_training",
     batch_norm_meta("aten::_native_batch_norm_legit_no_training", "", -1)},
    {"aten::_batch_norm_no_update", batch_norm_meta("aten::_batch_norm_no_update", "", -2)},
    {"aten::_batch_norm_with_update",
     [](const torch::jit::Stack& stack, size_t first) {
       const at::Tensor& input = stack[first].toTensor();
       check_batch_norm_input_rank("aten::_batch_norm_with_update", input);
       check_batch_norm_params("aten::_batch_norm_with_update", stack, first);
       std::vector<c10::IValue> r = default_meta("aten::_batch_norm_with_update", "", stack, first);
       for (size_t i : {size_t{1}, size_t{2}}) retype_result(r, i, batch_norm_stats_dtype(stack, first));
       return r;
     }},
    {"aten::native_group_norm", group_norm_meta},
};

}  // namespace
}  // namespace torch_tpu::eager
