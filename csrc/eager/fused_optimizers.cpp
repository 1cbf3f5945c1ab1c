// torch.optim.Adam/AdamW(fused=True) -- the default optimizer of Transformers'
// Trainer on devices PyTorch lists as fused-capable, PrivateUse1 included.
// Each parameter is one program (cached by geometry) that reads the
// parameter, its gradient, state and step, and writes the parameter and
// state in place; hyper-parameters are runtime operands, so a learning-rate
// schedule does not recompile.
#include <torch/library.h>

#include "eager/executor.h"
#include "ops/adam_update.h"

namespace torch_tpu::eager {
namespace {

using TensorList = at::TensorList;

struct Hyper {
  std::optional<at::Tensor> lr_tensor;
  double lr = 0, beta1, beta2, weight_decay, eps;
};

void fused_adam(const char* op, bool adamw, TensorList params, TensorList grads, TensorList exp_avgs,
                TensorList exp_avg_sqs, TensorList max_exp_avg_sqs, TensorList steps, const Hyper& h, bool amsgrad,
                bool maximize, const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  size_t n = params.size();
  TORCH_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n && steps.size() == n, op,
              ": expected the same number of params, grads, exp_avgs, exp_avg_sqs and state_steps, got ", n, ", ",
              grads.size(), ", ", exp_avgs.size(), ", ", exp_avg_sqs.size(), ", ", steps.size());
  TORCH_CHECK(!amsgrad || max_exp_avg_sqs.size() == n, op, ": amsgrad needs one max_exp_avg_sq per param");
  bool has_scale = grad_scale.has_value() && grad_scale->defined();
  bool has_inf = found_inf.has_value() && found_inf->defined();
  ops::AdamOptions opt{adamw, amsgrad, maximize};
  for (size_t i = 0; i < n; ++i) {
    TORCH_CHECK(params[i].sizes() == grads[i].sizes(), op, ": param ", i, " has shape ", params[i].sizes(),
                " but its grad has shape ", grads[i].sizes());
    Invocation inv;
    inv.op = op;
    inv.static_key = std::string(adamw ? "w" : "") + (amsgrad ? "a" : "") + (maximize ? "m" : "") +
                     (has_scale ? "s" : "") + (has_inf ? "i" : "") + (h.lr_tensor ? "t" : "");
    inv.device_index = params[i].device().index();
    inv.inputs = {params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], steps[i]};
    if (amsgrad) inv.inputs.push_back(max_exp_avg_sqs[i]);
    if (has_scale) inv.inputs.push_back(*grad_scale);
    if (has_inf) inv.inputs.push_back(*found_inf);
    if (h.lr_tensor) inv.inputs.push_back(*h.lr_tensor);
    auto f32 = [](double v) { return runtime_scalar_as(c10::Scalar(v), hlo::DType::F32); };
    if (!h.lr_tensor) inv.scalars.push_back(f32(h.lr));
    for (double v : {h.beta1, h.beta2, h.weight_decay, h.eps}) inv.scalars.push_back(f32(v));
    inv.targets = {params[i], exp_avgs[i], exp_avg_sqs[i]};
    if (amsgrad) inv.targets.push_back(max_exp_avg_sqs[i]);
    inv.infer_fresh = [] { return std::vector<FreshOutput>{}; };
    bool lr_tensor = h.lr_tensor.has_value();
    inv.lower = [=](hlo::Builder& b, const std::vector<hlo::Value>& t, const std::vector<hlo::Value>& s) {
      ops::AdamInputs in;
      in.param = t[0], in.grad = t[1], in.exp_avg = t[2], in.exp_avg_sq = t[3], in.step = t[4];
      size_t k = 5;
      if (amsgrad) in.max_exp_avg_sq = t[k++];
      if (has_scale) in.grad_scale = t[k++], in.has_grad_scale = true;
      if (has_inf) in.found_inf = t[k++], in.has_found_inf = true;
      size_t j = 0;
      in.lr = lr_tensor ? t[k++] : s[j++];
      in.beta1 = s[j++], in.beta2 = s[j++], in.weight_decay = s[j++], in.eps = s[j++];
      return ops::adam_update(b, in, opt);
    };
    execute(inv);
  }
}

template <bool AdamW>
void fused_adam_float_lr(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                         TensorList max_exp_avg_sqs, TensorList steps, double lr, double beta1, double beta2,
                         double weight_decay, double eps, bool amsgrad, bool maximize,
                         const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  Hyper h{std::nullopt, lr, beta1, beta2, weight_decay, eps};
  fused_adam(AdamW ? "_fused_adamw_" : "_fused_adam_", AdamW, params, grads, exp_avgs, exp_avg_sqs,
             max_exp_avg_sqs, steps, h, amsgrad, maximize, grad_scale, found_inf);
}

template <bool AdamW>
void fused_adam_tensor_lr(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                          TensorList max_exp_avg_sqs, TensorList steps, const at::Tensor& lr, double beta1,
                          double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                          const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  Hyper h{lr, 0, beta1, beta2, weight_decay, eps};
  fused_adam(AdamW ? "_fused_adamw_" : "_fused_adam_", AdamW, params, grads, exp_avgs, exp_avg_sqs,
             max_exp_avg_sqs, steps, h, amsgrad, maximize, grad_scale, found_inf);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_adamw_", fused_adam_float_lr<true>);
  m.impl("_fused_adamw_.tensor_lr", fused_adam_tensor_lr<true>);
  m.impl("_fused_adam_", fused_adam_float_lr<false>);
  m.impl("_fused_adam_.tensor_lr", fused_adam_tensor_lr<false>);
}

}  // namespace torch_tpu::eager
