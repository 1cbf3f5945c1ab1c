// One Adam/AdamW step for one parameter, as the CPU's fused kernel computes
// it (torch.optim.Adam(W)(fused=True)), torch-free. Used by the eager
// _fused_adam(w)_ kernels, one program per parameter geometry.
#pragma once
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::ops {

struct AdamOptions {
  bool adamw = true;  // decoupled weight decay (AdamW) vs L2 in the gradient (Adam)
  bool amsgrad = false;
  bool maximize = false;
};

struct AdamInputs {
  hlo::Value param, grad, exp_avg, exp_avg_sq;
  hlo::Value max_exp_avg_sq;  // amsgrad only
  hlo::Value step;            // the step count after this step's increment (0-d or 1-element)
  // 0-d runtime values (any float dtype): learning rate and hyper-parameters.
  hlo::Value lr, beta1, beta2, weight_decay, eps;
  hlo::Value grad_scale, found_inf;  // optional (AMP): empty when absent
  bool has_grad_scale = false, has_found_inf = false;
};

// New values of param, exp_avg, exp_avg_sq (and max_exp_avg_sq with amsgrad),
// each in its input's dtype. With found_inf == 1 every value is unchanged.
std::vector<hlo::Value> adam_update(hlo::Builder& b, const AdamInputs& in, const AdamOptions& opt);

}  // namespace torch_tpu::ops
