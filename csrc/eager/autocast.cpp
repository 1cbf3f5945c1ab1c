// torch.autocast("tpu"): the AutocastPrivateUse1 dispatch key with the op
// lists PyTorch publishes for backends to reuse (ATen/autocast_mode.h, the
// lists CUDA registers): matmuls and convolutions in the lower precision,
// numerically sensitive ops (exp, log, norms, losses, softmax, sums) in
// float32, mixed-input ops at the widest input type. Every other op falls
// through. The casts run before the tpu kernels, so the eager cache sees the
// cast tensors and needs no autocast field in its key.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace torch_tpu::eager {
namespace {

// The KERNEL_* macros and op lists name CastPolicy, WrapFunction, Tensor, ScalarType unqualified.
using namespace at;            // NOLINT
using namespace at::autocast;  // NOLINT

at::Tensor binary_cross_entropy_refused(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                        int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy / torch.nn.BCELoss are not allowed inside "
              "torch.autocast(\"tpu\"): a lower-precision input can saturate the log. Use "
              "binary_cross_entropy_with_logits / BCEWithLogitsLoss (which combine the sigmoid and the loss "
              "safely), or compute the loss outside the autocast region with float32 inputs.");
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define TPU_LOWER_PRECISION(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
  AT_FORALL_LOWER_PRECISION_FP(TPU_LOWER_PRECISION)
#define TPU_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
  AT_FORALL_FP32(TPU_FP32)
#define TPU_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
  AT_FORALL_FP32_SET_OPT_DTYPE(TPU_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
#define TPU_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_PROMOTE(TPU_PROMOTE)
  m.impl("binary_cross_entropy", TORCH_FN(binary_cross_entropy_refused));
}

}  // namespace
}  // namespace torch_tpu::eager
