// native_batch_norm on tpu. Its schema does not mark running_mean/running_var
// as written (a legacy of the op), though training updates them in place; the
// boxed kernel writes only annotated arguments. So it runs as
// _native_batch_norm_legit (same arguments, running stats Tensor(a!)/(b!)),
// whose lowering updates them, or its no_stats overload when there are none.
// (Below autograd: native_batch_norm's derivative still applies.)
#include <ATen/ops/_native_batch_norm_legit.h>
#include <torch/library.h>

namespace torch_tpu::eager {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps) {
  bool has_mean = running_mean && running_mean->defined();
  bool has_var = running_var && running_var->defined();
  if (!has_mean && !has_var) return at::_native_batch_norm_legit(input, weight, bias, training, momentum, eps);
  TORCH_CHECK(has_mean && has_var, "native_batch_norm: running_mean and running_var must both be given or both be None");
  at::Tensor mean = *running_mean, var = *running_var;  // shallow: same storage, written in place
  return at::_native_batch_norm_legit(input, weight, bias, mean, var, training, momentum, eps);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("native_batch_norm", native_batch_norm); }

}  // namespace
}  // namespace torch_tpu::eager
