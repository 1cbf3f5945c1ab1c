// Loss functions: nll_loss (cross_entropy is composite over it and
// log_softmax) and mse_loss, forward and backward. Reduction codes follow
// at::Reduction: 0 none, 1 mean, 2 sum.
#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "ops/lowering_error.h"
#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/torch_dtype_name.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

enum Reduction { kNone = 0, kMean = 1, kSum = 2 };

Value sum_dims(Builder& b, const Value& x, const std::vector<int64_t>& dims) {
  return b.reduce({x}, {b.constant_float(x.type.dtype, 0.0)}, dims,
                  [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
}

Value sum_all(Builder& b, const Value& x) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.type.rank(); ++i) dims.push_back(i);
  return sum_dims(b, x, dims);
}

int64_t reduction_of(const OpCall& c, size_t i) {
  int64_t r = c.arg(i).i;
  if (r < kNone || r > kSum) throw std::invalid_argument(c.op + ": unknown reduction " + std::to_string(r));
  return r;
}

// The pieces nll_loss forward and backward share, for self [N, C] (or [C])
// and target [N] (or []): which column each row picks, and that row's weight.
// Picking by comparison with an iota (not a gather) keeps NaN/inf in other
// columns out of the result and needs no index clamping.
struct NllRows {
  Value self;    // [N, C] in the compute type
  Value picked;  // [N, C] i1: column == target, and the target is not ignored
  Value w;       // [N] the target's weight (1 without weights); 0 where ignored
};

NllRows nll_rows(Builder& b, const OpCall& c, const Values& v, size_t self_i, size_t target_i,
                 size_t weight_i, size_t ignore_i) {
  Value self_in = operand(c, v, self_i);
  const Value& target_in = operand(c, v, target_i);
  if (self_in.type.rank() == 4) {  // nll_loss2d: [N, C, H, W] -> rows [N*H*W, C]
    self_in = b.transpose(self_in, {0, 2, 3, 1});
    const auto& d = self_in.type.dims;
    self_in = b.reshape(self_in, {d[0] * d[1] * d[2], d[3]});
  } else if (self_in.type.rank() < 1 || self_in.type.rank() > 2) {
    throw std::invalid_argument(c.op + ": input tensor should be 1D or 2D");
  }
  if (target_in.type.dtype != DType::I64 && target_in.type.dtype != DType::U8)
    throw std::invalid_argument(c.op + ": expected target dtype to be Long or Byte, but got " +
                                hlo::dtype_name(target_in.type.dtype));
  DType ct = compute_type(self_in.type.dtype);
  int64_t n = self_in.type.rank() == 2 ? self_in.type.dims[0] : 1;
  int64_t classes = self_in.type.dims.back();
  NllRows r;
  r.self = b.reshape(b.convert(self_in, ct), {n, classes});
  if (target_in.type.numel() != n) throw std::invalid_argument(c.op + ": target does not match the input's batch");
  Value target = b.reshape(b.convert(target_in, DType::I64), {n});
  Value ignored = b.compare(target, b.splat_int(target.type, c.arg(ignore_i).i), "EQ");
  Value below = b.compare(target, b.splat_int(target.type, 0), "LT");
  Value above = b.compare(target, b.splat_int(target.type, classes), "GE");
  Value bad = b.binary("and", b.binary("or", below, above), b.unary("not", ignored));
  Value any_bad = b.reduce({bad}, {b.constant_bool(false)}, {0}, [](Builder& rb, const Values& a) {
    return Values{rb.binary("or", a[0], a[1])};
  })[0];
  add_runtime_check(any_bad, CheckKind::Index, "Target is out of bounds.");
  TensorType nc(DType::I64, {n, classes});
  Value column = b.iota(nc, 1);
  Value eq = b.compare(column, b.broadcast_in_dim(target, nc.dims, {0}), "EQ");
  r.picked = b.binary("and", eq, b.broadcast_in_dim(b.unary("not", ignored), nc.dims, {0}));
  TensorType row(ct, {n});
  if (c.arg(weight_i).is_none()) {
    r.w = b.select(ignored, b.splat_float(row, 0.0), b.splat_float(row, 1.0));
  } else {
    Value wt = b.broadcast_in_dim(b.convert(operand(c, v, weight_i), ct), {n, classes}, {1});
    r.w = sum_dims(b, b.select(r.picked, wt, b.splat_float(wt.type, 0.0)), {1});
  }
  return r;
}

// nll_loss_forward(self, target, weight?, reduction, ignore_index) -> (output, total_weight);
// nll_loss2d_forward has the same arguments with a [N, C, H, W] self.
Values nll_forward(Builder& b, const OpCall& c, const Values& v) {
  int64_t red = reduction_of(c, 3);
  NllRows r = nll_rows(b, c, v, 0, 1, 2, 4);
  Value zeros = b.splat_float(r.self.type, 0.0);
  Value x = sum_dims(b, b.select(r.picked, r.self, zeros), {1});
  Value loss = b.negate(b.multiply(x, r.w));
  Value total = sum_all(b, r.w);
  bool batched = operand(c, v, 0).type.rank() != 1;
  Value out = red == kNone ? loss : sum_all(b, loss);
  if (red == kMean) out = b.divide(out, total);
  if (red == kNone && batched) total = b.constant_float(total.type.dtype, 0.0);  // the CPU leaves it 0
  const auto& o = c.outputs;
  return Values{b.reshape(b.convert(out, o[0].dtype), o[0].dims), b.reshape(b.convert(total, o[1].dtype), o[1].dims)};
}
TORCH_TPU_LOWERING("nll_loss_forward", nll_forward);
TORCH_TPU_LOWERING("nll_loss2d_forward", nll_forward);

// nll_loss_backward(grad_output, self, target, weight?, reduction, ignore_index, total_weight),
// and nll_loss2d_backward with a [N, C, H, W] self.
Values nll_backward(Builder& b, const OpCall& c, const Values& v) {
  int64_t red = reduction_of(c, 4);
  NllRows r = nll_rows(b, c, v, 1, 2, 3, 5);
  int64_t n = r.self.type.dims[0];
  TensorType row(r.self.type.dtype, {n});
  Value g = b.convert(operand(c, v, 0), row.dtype);
  g = red == kNone ? b.reshape(g, {n}) : b.broadcast_in_dim(b.reshape(g, {}), {n}, {});
  if (red == kMean) g = b.divide(g, b.broadcast_in_dim(b.reshape(b.convert(operand(c, v, 6), row.dtype), {}), {n}, {}));
  Value per_row = b.negate(b.multiply(r.w, g));
  Value full = b.broadcast_in_dim(per_row, r.self.type.dims, {0});
  Value grad = b.select(r.picked, full, b.splat_float(full.type, 0.0));
  const auto& o = c.outputs[0];
  grad = b.convert(grad, o.dtype);
  if (o.rank() == 4)  // rows [N*H*W, C] back to [N, C, H, W]
    return Values{b.transpose(b.reshape(grad, {o.dims[0], o.dims[2], o.dims[3], o.dims[1]}), {0, 3, 1, 2})};
  return Values{b.reshape(grad, o.dims)};
}
TORCH_TPU_LOWERING("nll_loss_backward", nll_backward);
TORCH_TPU_LOWERING("nll_loss2d_backward", nll_backward);

// The broadcast shape of self and target: the result's shape for reduction none.
std::vector<int64_t> broadcast_shape(const Value& s, const Value& t) {
  std::vector<int64_t> shape = s.type.rank() >= t.type.rank() ? s.type.dims : t.type.dims;
  for (int64_t i = 1; i <= std::min(s.type.rank(), t.type.rank()); ++i) {
    int64_t a = s.type.dims[s.type.rank() - i], bb = t.type.dims[t.type.rank() - i];
    shape[shape.size() - i] = a == 1 ? bb : a;
  }
  return shape;
}

// A pointwise loss of (self - target) or (self, target), then the reduction.
using PointLoss = std::function<Value(Builder&, const Value& self, const Value& target)>;

Values pointwise_loss(Builder& b, const OpCall& c, const Values& v, int64_t red, const PointLoss& f) {
  const auto& o = c.outputs[0];
  DType ct = compute_type(o.dtype);
  const Value& s = operand(c, v, 0);
  const Value& t = operand(c, v, 1);
  TensorType full(ct, broadcast_shape(s, t));
  Value l = f(b, to_type(b, s, full), to_type(b, t, full));
  if (red == kNone) return Values{b.convert(l, o.dtype)};
  Value total = sum_all(b, l);
  if (red == kMean) total = b.divide(total, b.constant_float(ct, static_cast<double>(full.numel())));
  return Values{b.reshape(b.convert(total, o.dtype), o.dims)};
}

// The gradient of a pointwise loss: (grad_output, self, target, reduction at `red_i`); `f`
// gives d loss / d self, scaled by grad and 1/n for the mean.
Values pointwise_loss_backward(Builder& b, const OpCall& c, const Values& v, size_t red_i, const PointLoss& f) {
  int64_t red = reduction_of(c, red_i);
  const auto& o = c.outputs[0];
  TensorType full = o.with_dtype(compute_type(o.dtype));
  Value d = f(b, to_type(b, operand(c, v, 1), full), to_type(b, operand(c, v, 2), full));
  Value g = to_type(b, operand(c, v, 0), full);
  // The CPU's mean divides by self's size, also when target broadcasts it larger.
  if (red == kMean) g = b.divide(g, b.splat_float(full, static_cast<double>(operand(c, v, 1).type.numel())));
  return Values{b.convert(b.multiply(d, g), o.dtype)};
}

// mse_loss(self, target, reduction)
TORCH_TPU_LOWERING("mse_loss", [](Builder& b, const OpCall& c, const Values& v) {
  return pointwise_loss(b, c, v, reduction_of(c, 2), [](Builder& b, const Value& x, const Value& y) {
    Value d = b.subtract(x, y);
    return b.multiply(d, d);
  });
});

// mse_loss_backward(grad_output, self, target, reduction) = norm * (self - target) * grad
TORCH_TPU_LOWERING("mse_loss_backward", [](Builder& b, const OpCall& c, const Values& v) {
  int64_t red = reduction_of(c, 3);
  const auto& o = c.outputs[0];
  TensorType full = o.with_dtype(compute_type(o.dtype));
  double norm = red == kMean ? 2.0 / static_cast<double>(operand(c, v, 1).type.numel()) : 2.0;
  Value d = b.subtract(to_type(b, operand(c, v, 1), full), to_type(b, operand(c, v, 2), full));
  Value g = to_type(b, operand(c, v, 0), full);
  return Values{b.convert(b.multiply(b.multiply(b.splat_float(full, norm), d), g), o.dtype)};
});

// smooth_l1_loss(self, target, reduction, beta): |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta
// (beta 0: plain l1).
// The CPU kernels of smooth_l1 and huber (and their backward) take floating
// types only: an integer loss is its NotImplementedError (XLA: a compile error).
void require_float_loss(const OpCall& c, const char* kernel) {
  if (!hlo::is_float(c.outputs[0].dtype)) not_implemented_for(kernel, c.outputs[0].dtype);
}

TORCH_TPU_LOWERING("smooth_l1_loss", [](Builder& b, const OpCall& c, const Values& v) {
  double beta = c.arg(3).d;
  // the CPU's meta check (NaN fails it too); PyTorch's meta registration skips it
  if (!(beta >= 0)) throw std::invalid_argument("smooth_l1_loss does not support negative values for beta.");
  require_float_loss(c, "smooth_l1_cpu");
  return pointwise_loss(b, c, v, reduction_of(c, 2), [beta](Builder& b, const Value& x, const Value& y) {
    Value z = b.unary("abs", b.subtract(x, y));
    if (beta == 0) return z;
    Value quad = b.divide(b.multiply(b.multiply(b.splat_float(z.type, 0.5), z), z), b.splat_float(z.type, beta));
    return b.select(b.compare(z, b.splat_float(z.type, beta), "LT"), quad,
                    b.subtract(z, b.splat_float(z.type, 0.5 * beta)));
  });
});

// smooth_l1_loss_backward(grad_output, self, target, reduction, beta)
TORCH_TPU_LOWERING("smooth_l1_loss_backward", [](Builder& b, const OpCall& c, const Values& v) {
  double beta = c.arg(4).d;
  require_float_loss(c, "smooth_l1_backward_cpu_out");
  return pointwise_loss_backward(b, c, v, 3, [beta](Builder& b, const Value& x, const Value& y) {
    Value d = b.subtract(x, y);
    Value one = b.splat_float(d.type, 1.0), zero = b.splat_float(d.type, 0.0);
    Value sign = b.select(b.compare(d, zero, "GT"), one, b.select(b.compare(d, zero, "LT"), b.negate(one), zero));
    if (beta == 0) return sign;
    Value bt = b.splat_float(d.type, beta);
    Value inner = b.divide(d, bt);
    return b.select(b.compare(d, b.negate(bt), "LE"), b.negate(one), b.select(b.compare(d, bt, "GE"), one, inner));
  });
});

// huber_loss(self, target, reduction, delta): |d| < delta ? 0.5 d^2 : delta (|d| - 0.5 delta)
TORCH_TPU_LOWERING("huber_loss", [](Builder& b, const OpCall& c, const Values& v) {
  double delta = c.arg(3).d;
  require_float_loss(c, "huber_cpu");
  return pointwise_loss(b, c, v, reduction_of(c, 2), [delta](Builder& b, const Value& x, const Value& y) {
    Value z = b.unary("abs", b.subtract(x, y));
    Value dl = b.splat_float(z.type, delta);
    Value quad = b.multiply(b.multiply(b.splat_float(z.type, 0.5), z), z);
    Value lin = b.multiply(dl, b.subtract(z, b.splat_float(z.type, 0.5 * delta)));
    return b.select(b.compare(z, dl, "LT"), quad, lin);
  });
});

// huber_loss_backward(grad_output, self, target, reduction, delta)
TORCH_TPU_LOWERING("huber_loss_backward", [](Builder& b, const OpCall& c, const Values& v) {
  double delta = c.arg(4).d;
  require_float_loss(c, "huber_backward_cpu_out");
  return pointwise_loss_backward(b, c, v, 3, [delta](Builder& b, const Value& x, const Value& y) {
    Value d = b.subtract(x, y);
    Value dl = b.splat_float(d.type, delta);
    return b.select(b.compare(d, b.negate(dl), "LT"), b.negate(dl), b.select(b.compare(d, dl, "GT"), dl, d));
  });
});

// The linear index of the first true element of `pred` (its numel if none), 0-d int64.
Value first_true(Builder& b, const Value& pred) {
  int64_t n = pred.type.numel();
  Value flat = b.reshape(pred, {n});
  Value idx = b.iota(TensorType(DType::I64, {n}), 0);
  Value none = b.splat_int(idx.type, n);
  return b.reduce({b.select(flat, idx, none)}, {b.constant_int(DType::I64, n)}, {0},
                  [](Builder& rb, const Values& a) { return Values{rb.minimum(a[0], a[1])}; })[0];
}

// binary_cross_entropy's inputs and targets outside [0, 1] (NaN too) raise,
// like the CPU (at the next sync), with the message of the CPU's first bad
// element: it checks the input, then the target, element by element.
void check_probabilities(Builder& b, const Value& x, const Value& y) {
  auto bad = [&](const Value& t) {
    Value ok = b.binary("and", b.compare(t, b.splat_float(t.type, 0.0), "GE"), b.compare(t, b.splat_float(t.type, 1.0), "LE"));
    return b.unary("not", ok);
  };
  Value first_x = first_true(b, bad(x)), first_y = first_true(b, bad(y));
  Value n = b.constant_int(DType::I64, x.type.numel());
  add_runtime_check(b.binary("and", b.compare(first_x, n, "LT"), b.compare(first_x, first_y, "LE")), CheckKind::Runtime,
                    "all elements of input should be between 0 and 1");
  add_runtime_check(b.compare(first_y, first_x, "LT"), CheckKind::Runtime, "all elements of target should be between 0 and 1");
}

// Rounds each step to the result dtype where it is narrower than the
// compute type, as the CPU's Half/BFloat16 arithmetic does.
struct StepRounding {
  Builder& b;
  DType out, ct;
  Value operator()(const Value& t) const { return out == ct ? t : b.convert(b.convert(t, out), ct); }
};

// binary_cross_entropy(self, target, weight?, reduction), as the CPU's kernel:
// (y - 1) * max(log1p(-x), -100) - y * max(log(x), -100), each step in the
// dtype, then times the weight.
TORCH_TPU_LOWERING("binary_cross_entropy", [](Builder& b, const OpCall& c, const Values& v) {
  const Value* w = c.arg(2).is_none() ? nullptr : &operand(c, v, 2);
  DType self_t = operand(c, v, 0).type.dtype, target_t = operand(c, v, 1).type.dtype;
  if (self_t != target_t)  // the CPU's check, before any value is read
    throw std::invalid_argument(std::string("Found dtype ") + torch_dtype_name(target_t) + " but expected " +
                                torch_dtype_name(self_t));
  DType out = c.outputs[0].dtype;
  return pointwise_loss(b, c, v, reduction_of(c, 3), [w, out](Builder& b, const Value& x, const Value& y) {
    check_probabilities(b, x, y);
    StepRounding rnd{b, out, x.type.dtype};
    Value floor = b.splat_float(x.type, -100.0);
    Value log1m = b.maximum(rnd(b.unary("log_plus_one", b.negate(x))), floor);
    Value logx = b.maximum(rnd(b.unary("log", x)), floor);
    Value l = rnd(b.subtract(rnd(b.multiply(rnd(b.subtract(y, b.splat_float(y.type, 1.0))), log1m)), rnd(b.multiply(y, logx))));
    if (!w) return l;
    if (w->type.dtype == DType::F64 && l.type.dtype != DType::F64)  // loss.mul_(weight): in double, then rounded
      return rnd(b.convert(b.multiply(b.convert(l, DType::F64), to_type(b, *w, l.type.with_dtype(DType::F64))),
                           l.type.dtype));
    return rnd(b.multiply(l, to_type(b, *w, l.type)));
  });
});

// binary_cross_entropy_backward(grad_output, self, target, weight?, reduction),
// as the CPU's kernel: grad * (x - y) / max((1 - x) * x, 1e-12f), each step in
// the dtype (1e-12 is 0 in float16, so 0 / 0 = NaN at x = 0) and max the
// CPU's std::max (max(-0, 0) is -0: x = -0 gives +inf, not -inf); then times
// the weight, then over the size for the mean.
TORCH_TPU_LOWERING("binary_cross_entropy_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const Value* w = c.arg(3).is_none() ? nullptr : &operand(c, v, 3);
  int64_t red = reduction_of(c, 4);
  const auto& o = c.outputs[0];
  TensorType full = o.with_dtype(compute_type(o.dtype));
  StepRounding rnd{b, o.dtype, full.dtype};
  Value g = to_type(b, operand(c, v, 0), full), x = to_type(b, operand(c, v, 1), full), y = to_type(b, operand(c, v, 2), full);
  // EPSILON is a float in the CPU's kernel: 1e-12 rounded to float32, then to the dtype
  Value eps = b.broadcast_to(rnd(b.convert(b.constant_float(DType::F32, 1e-12), full.dtype)), full.dims);
  Value den = rnd(b.multiply(rnd(b.subtract(b.splat_float(full, 1.0), x)), x));
  den = b.select(b.compare(den, eps, "LT"), eps, den);
  Value r = rnd(b.divide(rnd(b.multiply(g, rnd(b.subtract(x, y)))), den));
  if (w) r = rnd(b.multiply(r, to_type(b, *w, full)));
  if (red == kMean) r = rnd(b.divide(r, b.splat_float(full, static_cast<double>(operand(c, v, 1).type.numel()))));
  return Values{b.convert(r, o.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
