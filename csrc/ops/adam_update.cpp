#include "ops/adam_update.h"

#include "ops/lowering_helpers.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {

std::vector<Value> adam_update(Builder& b, const AdamInputs& in, const AdamOptions& opt) {
  const TensorType& pt = in.param.type;
  DType f = compute_type(pt.dtype);  // opmath: float32 for half types
  TensorType t = pt.with_dtype(f);
  auto s = [&](const Value& v) { return b.convert(b.reshape(v, {}), f); };  // a 0-d opmath scalar
  auto bc = [&](const Value& v) { return b.broadcast_to(v, t.dims); };     // 0-d -> t
  auto one = [&]() { return b.constant_float(f, 1); };

  Value lr = s(in.lr), beta1 = s(in.beta1), beta2 = s(in.beta2), wd = s(in.weight_decay), eps = s(in.eps);
  Value step = s(in.step);
  // Host-side scalars of the CPU kernel, computed on device: bias corrections
  // from the step count, the step size, and the two blend coefficients.
  Value bias1 = b.subtract(one(), b.binary("power", beta1, step));
  Value bias2 = b.subtract(one(), b.binary("power", beta2, step));
  Value bias2_sqrt = b.unary("sqrt", bias2);
  Value step_size = b.divide(lr, bias1);
  Value avg_coef = b.subtract(one(), beta1), sq_coef = b.subtract(one(), beta2);

  Value param = b.convert(in.param, f), grad = b.convert(in.grad, f);
  Value exp_avg = b.convert(in.exp_avg, f), exp_avg_sq = b.convert(in.exp_avg_sq, f);
  if (in.has_grad_scale) grad = b.divide(grad, bc(s(in.grad_scale)));
  if (opt.maximize) grad = b.negate(grad);
  if (opt.adamw) {
    param = b.multiply(param, bc(b.subtract(one(), b.multiply(lr, wd))));
  } else {
    grad = b.add(grad, b.multiply(param, bc(wd)));
  }
  // exp_avg.lerp_(grad, 1 - beta1), with lerp's two formulas split at weight 0.5.
  Value w = bc(avg_coef);
  Value diff = b.subtract(grad, exp_avg);
  Value low = b.add(exp_avg, b.multiply(w, diff));
  Value high = b.subtract(grad, b.multiply(diff, b.subtract(bc(one()), w)));
  Value half = b.constant_float(f, 0.5);
  Value new_avg = b.select(bc(b.compare(avg_coef, half, "LT")), low, high);
  Value new_sq = b.add(b.multiply(exp_avg_sq, bc(beta2)), b.multiply(b.multiply(bc(sq_coef), grad), grad));
  Value second = new_sq, new_max;
  if (opt.amsgrad) {
    new_max = b.maximum(b.convert(in.max_exp_avg_sq, f), new_sq);
    second = new_max;
  }
  Value denom = b.add(b.divide(b.unary("sqrt", second), bc(bias2_sqrt)), bc(eps));
  Value new_param = b.subtract(param, b.divide(b.multiply(bc(step_size), new_avg), denom));

  std::vector<Value> olds{in.param, in.exp_avg, in.exp_avg_sq};
  std::vector<Value> news{new_param, new_avg, new_sq};
  if (opt.amsgrad) {
    olds.push_back(in.max_exp_avg_sq);
    news.push_back(new_max);
  }
  Value skip;
  if (in.has_found_inf) skip = b.compare(s(in.found_inf), one(), "EQ");
  for (size_t i = 0; i < news.size(); ++i) {
    news[i] = b.convert(news[i], olds[i].type.dtype);
    if (in.has_found_inf) news[i] = b.select(b.broadcast_to(skip, olds[i].type.dims), olds[i], news[i]);
  }
  return news;
}

}  // namespace torch_tpu::ops
