// batch_norm, forward and backward: _native_batch_norm_legit (+ no_stats,
// no_training, functional), _batch_norm_with_update / _no_update,
// native_batch_norm_backward and batch_norm_backward. Channels are dim 1;
// statistics reduce every other dim, in f32 for half types, with a two-pass
// variance. Training updates the running stats like the CPU:
// r = momentum * batch + (1 - momentum) * r, with the unbiased batch variance.
// native_batch_norm (what F.batch_norm reaches) has no rule: its schema does
// not mark the running stats written, so the eager layer runs it as
// _native_batch_norm_legit, whose running stats are annotated (Tensor(a!)).
#include <cmath>
#include <optional>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

std::vector<int64_t> all_but_channel(int64_t rank) {
  std::vector<int64_t> r{0};
  for (int64_t i = 2; i < rank; ++i) r.push_back(i);
  return r;
}

Value channel_sum(Builder& b, const Value& x) {
  return b.reduce({x}, {b.constant_float(x.type.dtype, 0.0)}, all_but_channel(x.type.rank()),
                  [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
}

// A per-channel [C] value broadcast over `like` ([N, C, ...]), in like's dtype.
Value per_channel(Builder& b, const Value& s, const Value& like) {
  return b.broadcast_in_dim(b.convert(b.reshape(s, {like.type.dims[1]}), like.type.dtype), like.type.dims, {1});
}

// A per-channel parameter or statistic as [C] in `ct`; a 0-d one applies to
// every channel (what PyTorch's reference decomposition does).
Value channels(Builder& b, const Value& p, int64_t C, DType ct) {
  Value x = b.convert(p, ct);
  if (x.type.rank() == 0) return b.broadcast_in_dim(x, {C}, {});
  return b.reshape(x, {C});
}

// `s` as output type `t`; a statistic the CPU leaves empty (eval) is zeros.
Value as_output(Builder& b, const Value& s, const TensorType& t) {
  if (t.numel() != s.type.numel()) return b.splat_int(t, 0);
  return b.reshape(b.convert(s, t.dtype), t.dims);
}

struct Forward {
  Value out;          // input's dtype
  Value mean, invstd; // [C], compute type: the batch's (training) or the running stats'
  std::optional<Value> new_rm, new_rv;
};

// `stat_dtype`: the saved statistics' dtype. In training the CPU stores the
// batch mean and invstd in it (the input's dtype unless the call is mixed) and
// normalizes with those stored values, so half inputs see them rounded.
Forward forward(Builder& b, const OpCall& c, const Values& v, const Value* w, const Value* bias, const Value* rm,
                const Value* rv, bool training, double momentum, double eps, DType stat_dtype) {
  const Value& input = operand(c, v, 0);
  if (input.type.rank() < 2) throw std::invalid_argument(c.op + ": input must have at least 2 dims");
  DType ct = compute_type(input.type.dtype);
  Value x = b.convert(input, ct);
  int64_t C = x.type.dims[1];
  int64_t n = C ? x.type.numel() / C : 0;
  TensorType ch(ct, {C});
  Forward f;
  Value var;
  if (training) {
    Value inv_n = b.splat_float(ch, 1.0 / static_cast<double>(n ? n : 1));
    f.mean = b.multiply(channel_sum(b, x), inv_n);
    Value xc = b.subtract(x, per_channel(b, f.mean, x));
    Value var_sum = channel_sum(b, b.multiply(xc, xc));
    var = b.multiply(var_sum, inv_n);
    if (rm) {
      Value m = channels(b, *rm, C, ct);
      f.new_rm = b.add(b.multiply(b.splat_float(ch, momentum), f.mean), b.multiply(b.splat_float(ch, 1 - momentum), m));
    }
    if (rv) {
      Value r = channels(b, *rv, C, ct);
      Value unbiased = b.divide(var_sum, b.splat_float(ch, static_cast<double>(n - 1)));
      f.new_rv = b.add(b.multiply(b.splat_float(ch, momentum), unbiased), b.multiply(b.splat_float(ch, 1 - momentum), r));
    }
  } else {
    if (!rm || !rv) throw std::invalid_argument(c.op + ": running_mean and running_var must be defined in evaluation mode");
    f.mean = channels(b, *rm, C, ct);
    var = channels(b, *rv, C, ct);
  }
  f.invstd = b.divide(b.splat_float(ch, 1.0), b.unary("sqrt", b.add(var, b.splat_float(ch, eps))));
  if (training && stat_dtype != ct) {
    f.mean = b.convert(b.convert(f.mean, stat_dtype), ct);
    f.invstd = b.convert(b.convert(f.invstd, stat_dtype), ct);
  }
  // y = (x - mean) * alpha + bias with per-channel alpha = invstd * w. (The
  // CPU's contiguous kernel folds mean into beta = bias - mean * alpha, which
  // cancels in float32 when |mean| is large and the variance small: -0.84
  // for 0 in a float16 channel of 60000s; its strided kernel does not fold.)
  Value alpha = w ? b.multiply(f.invstd, channels(b, *w, C, ct)) : f.invstd;
  Value y = b.multiply(b.subtract(x, per_channel(b, f.mean, x)), per_channel(b, alpha, x));
  if (bias) y = b.add(y, per_channel(b, channels(b, *bias, C, ct), x));
  f.out = b.convert(y, input.type.dtype);
  return f;
}

// _native_batch_norm_legit(input, weight?, bias?, running_mean(a!), running_var(b!), training,
// momentum, eps): the written running stats come first among the results.
TORCH_TPU_LOWERING("_native_batch_norm_legit", [](Builder& b, const OpCall& c, const Values& v) {
  bool training = c.arg(5).b;
  const Value &rm = operand(c, v, 3), &rv = operand(c, v, 4);
  Forward f = forward(b, c, v, optional_operand(c, v, 1), optional_operand(c, v, 2), &rm, &rv, training, c.arg(6).d, c.arg(7).d,
                      c.outputs[3].dtype);
  const auto& o = c.outputs;
  Value new_rm = training ? b.convert(*f.new_rm, o[0].dtype) : rm;
  Value new_rv = training ? b.convert(*f.new_rv, o[1].dtype) : rv;
  return Values{new_rm, new_rv, f.out, as_output(b, f.mean, o[3]), as_output(b, f.invstd, o[4])};
});

// _native_batch_norm_legit_functional(input, weight?, bias?, running_mean, running_var, training,
// momentum, eps) -> (out, save_mean, save_invstd, running_mean_out, running_var_out): the
// functional form AOTAutograd graphs carry.
TORCH_TPU_LOWERING("_native_batch_norm_legit_functional", [](Builder& b, const OpCall& c, const Values& v) {
  bool training = c.arg(5).b;
  const Value &rm = operand(c, v, 3), &rv = operand(c, v, 4);
  Forward f = forward(b, c, v, optional_operand(c, v, 1), optional_operand(c, v, 2), &rm, &rv, training, c.arg(6).d, c.arg(7).d,
                      c.outputs[1].dtype);
  const auto& o = c.outputs;
  Value new_rm = training ? b.convert(*f.new_rm, o[3].dtype) : rm;
  Value new_rv = training ? b.convert(*f.new_rv, o[4].dtype) : rv;
  return Values{f.out, as_output(b, f.mean, o[1]), as_output(b, f.invstd, o[2]), new_rm, new_rv};
});

// _native_batch_norm_legit.no_stats(input, weight?, bias?, training, momentum, eps)
TORCH_TPU_LOWERING("_native_batch_norm_legit.no_stats", [](Builder& b, const OpCall& c, const Values& v) {
  Forward f = forward(b, c, v, optional_operand(c, v, 1), optional_operand(c, v, 2), nullptr, nullptr, c.arg(3).b, c.arg(4).d,
                      c.arg(5).d, c.outputs[1].dtype);
  const auto& o = c.outputs;
  return Values{f.out, as_output(b, f.mean, o[1]), as_output(b, f.invstd, o[2])};
});

// _native_batch_norm_legit_no_training(input, weight?, bias?, running_mean, running_var, momentum, eps)
TORCH_TPU_LOWERING("_native_batch_norm_legit_no_training", [](Builder& b, const OpCall& c, const Values& v) {
  Forward f = forward(b, c, v, optional_operand(c, v, 1), optional_operand(c, v, 2), &operand(c, v, 3), &operand(c, v, 4), false,
                      c.arg(5).d, c.arg(6).d, c.outputs[1].dtype);
  const auto& o = c.outputs;
  return Values{f.out, as_output(b, f.mean, o[1]), as_output(b, f.invstd, o[2])};
});

// _batch_norm_with_update(input, weight?, bias?, running_mean(a!), running_var(b!), momentum, eps)
// -> (out, save_mean, save_invstd, reserve)
TORCH_TPU_LOWERING("_batch_norm_with_update", [](Builder& b, const OpCall& c, const Values& v) {
  Forward f = forward(b, c, v, optional_operand(c, v, 1), optional_operand(c, v, 2), &operand(c, v, 3), &operand(c, v, 4), true,
                      c.arg(5).d, c.arg(6).d, c.outputs[3].dtype);
  const auto& o = c.outputs;
  return Values{b.convert(*f.new_rm, o[0].dtype), b.convert(*f.new_rv, o[1].dtype), f.out,
                as_output(b, f.mean, o[3]),       as_output(b, f.invstd, o[4]),     b.splat_int(o[5], 0)};
});

// _batch_norm_no_update(input, weight?, bias?, running_mean?, running_var?, momentum, eps):
// eval with running stats, or batch statistics when they are absent.
TORCH_TPU_LOWERING("_batch_norm_no_update", [](Builder& b, const OpCall& c, const Values& v) {
  const Value *rm = optional_operand(c, v, 3), *rv = optional_operand(c, v, 4);
  bool training = !rm && !rv;
  Forward f = forward(b, c, v, optional_operand(c, v, 1), optional_operand(c, v, 2), rm, rv, training, c.arg(5).d, c.arg(6).d,
                      c.outputs[1].dtype);
  const auto& o = c.outputs;
  return Values{f.out, as_output(b, f.mean, o[1]), as_output(b, f.invstd, o[2]), b.splat_int(o[3], 0)};
});

// The backward of both: (grad_out, input, weight?, running_mean?, running_var?, save_mean?,
// save_invstd?) at args 0..6 (batch_norm_backward's save_var is the saved
// invstd too), then train, eps, output_mask.
Values backward(Builder& b, const OpCall& c, const Values& v, bool train, double eps) {
  const Value& input = operand(c, v, 1);
  DType ct = compute_type(input.type.dtype);
  Value x = b.convert(input, ct);
  Value dy = b.convert(operand(c, v, 0), ct);
  int64_t C = x.type.dims[1];
  int64_t n = C ? x.type.numel() / C : 0;
  TensorType ch(ct, {C});
  Value mean, invstd;
  if (train) {
    mean = b.reshape(b.convert(operand(c, v, 5), ct), {C});
    invstd = b.reshape(b.convert(operand(c, v, 6), ct), {C});
  } else {
    mean = channels(b, operand(c, v, 3), C, ct);
    Value var = channels(b, operand(c, v, 4), C, ct);
    invstd = b.divide(b.splat_float(ch, 1.0), b.unary("sqrt", b.add(var, b.splat_float(ch, eps))));
  }
  const Value* w = optional_operand(c, v, 2);
  Value wc = w ? channels(b, *w, C, ct) : b.splat_float(ch, 1.0);
  Value xhat = b.multiply(b.subtract(x, per_channel(b, mean, x)), per_channel(b, invstd, x));
  Value sum_dy = channel_sum(b, dy);
  Value sum_dy_xhat = channel_sum(b, b.multiply(dy, xhat));
  Value dx;
  if (train) {
    // dx = w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat))
    Value inv_n = b.splat_float(ch, 1.0 / static_cast<double>(n ? n : 1));
    Value proj = b.multiply(xhat, per_channel(b, b.multiply(sum_dy_xhat, inv_n), x));
    dx = b.subtract(b.subtract(dy, per_channel(b, b.multiply(sum_dy, inv_n), x)), proj);
    dx = b.multiply(dx, per_channel(b, b.multiply(invstd, wc), x));
  } else {
    dx = b.multiply(dy, per_channel(b, b.multiply(invstd, wc), x));
  }
  const auto& o = c.outputs;
  return Values{b.convert(dx, o[0].dtype), as_output(b, sum_dy_xhat, o[1]), as_output(b, sum_dy, o[2])};
}

// native_batch_norm_backward(grad_out, input, weight?, running_mean?, running_var?, save_mean?,
//                            save_invstd?, train, eps, output_mask)
TORCH_TPU_LOWERING("native_batch_norm_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return backward(b, c, v, c.arg(7).b, c.arg(8).d);
});

// batch_norm_backward(grad_out, input, weight, running_mean?, running_var?, save_mean?, save_var?,
//                     update, eps, output_mask, reserve): batch statistics when the forward
// updated running stats or had none.
TORCH_TPU_LOWERING("batch_norm_backward", [](Builder& b, const OpCall& c, const Values& v) {
  bool train = c.arg(7).b || c.arg(3).is_none() || c.arg(4).is_none();
  return backward(b, c, v, train, c.arg(8).d);
});

}  // namespace
}  // namespace torch_tpu::ops
