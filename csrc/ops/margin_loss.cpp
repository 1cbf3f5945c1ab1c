// Multi-class margin losses and their backward, as the CPU's kernels:
// multi_margin_loss: sum over j != y of max(0, margin - x_y + x_j)^p (times
// weight[y]) / C; multilabel_margin_loss: the targets are target[n, 0..] up to
// the first -1, and the loss sums max(0, 1 - x_t + x_k) over those targets t
// and the non-target classes k, over C. Input [N, C] or [C]. Value checks the
// CPU makes on the host (target range, p) are runtime checks here.
#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

constexpr int64_t kNone = 0, kMean = 1, kSum = 2;

struct Frame {
  Value x;  // [N, C] in the compute dtype
  int64_t n, c;
};

// The CPU's checks: float32/float64 only (its kernels have no half or integer
// case), then a non-empty vector or matrix.
Frame frame(Builder& b, const OpCall& c, const Value& input, const char* kernel) {
  if (input.type.dtype != DType::F32 && input.type.dtype != DType::F64) not_implemented_for(kernel, input.type.dtype);
  const auto& d = input.type.dims;
  bool ok = input.type.rank() == 0 || (input.type.rank() == 1 && d[0] != 0) || (input.type.rank() == 2 && d[1] != 0);
  if (!ok)
    throw std::invalid_argument("Expected non-empty vector or matrix with optional 0-dim batch size, but got: " +
                                input.type.str());
  DType ct = compute_type(input.type.dtype);
  int64_t n = input.type.rank() == 2 ? input.type.dims[0] : 1;
  int64_t cls = input.type.rank() == 0 ? 1 : input.type.dims.back();
  return {b.reshape(b.convert(input, ct), {n, cls}), n, cls};
}

Value reduce_rows(Builder& b, const Value& x, int64_t dim) {
  return b.reduce({x}, {b.constant_float(x.type.dtype, 0)}, {dim},
                  [](Builder& r, const Values& q) { return Values{r.add(q[0], q[1])}; })[0];
}

Value finish(Builder& b, const Value& per_sample, int64_t reduction, const TensorType& out) {
  Value r = per_sample;
  if (reduction != kNone) {
    r = reduce_rows(b, per_sample, 0);
    if (reduction == kMean) r = b.divide(r, b.splat_float(r.type, static_cast<double>(per_sample.type.dims[0])));
  }
  return b.reshape(b.convert(r, out.dtype), out.dims);
}

// The upstream gradient per sample [N] (with the mean's 1/N folded in).
Value upstream(Builder& b, const Value& grad, int64_t reduction, int64_t n, DType ct) {
  Value g = b.convert(grad, ct);
  if (reduction == kNone) return b.reshape(g, {n});
  g = b.broadcast_to(b.reshape(g, {}), {n});
  return reduction == kMean ? b.divide(g, b.splat_float(g.type, static_cast<double>(n))) : g;
}

// --- multi_margin_loss -------------------------------------------------------

struct MultiMargin {
  Frame f;
  Value onehot, z, active, weight_y, p_is_2;  // [N, C] except weight_y [N, C] broadcast, p_is_2 [N, C]
};

MultiMargin multi_margin(Builder& b, const OpCall& c, const Values& v, size_t self, size_t target, size_t p,
                         size_t margin, size_t weight, const char* kernel) {
  MultiMargin m{frame(b, c, operand(c, v, self), kernel), {}, {}, {}, {}, {}};
  const Frame& f = m.f;
  DType ct = f.x.type.dtype;
  Value t = b.reshape(b.convert(operand(c, v, target), DType::I64), {f.n});
  if (operand(c, v, target).type.numel() != f.n)
    throw std::invalid_argument(c.op + ": inconsistent target size " + operand(c, v, target).type.str());
  check_in_range(b, t, 0, f.c, CheckKind::Runtime, "target out of range");
  Value pv = b.convert(operand(c, v, p), ct);
  Value p_bad = logical_and(b, b.compare(pv, b.constant_float(ct, 1), "NE"), b.compare(pv, b.constant_float(ct, 2), "NE"));
  runtime_check(b, p_bad, "only p == 1 and p == 2 supported");
  TensorType it(DType::I64, {f.n, f.c});
  m.onehot = b.compare(b.iota(it, 1), b.broadcast_in_dim(t, it.dims, {0}), "EQ");
  Value xy = reduce_rows(b, b.select(m.onehot, f.x, b.splat_float(f.x.type, 0)), 1);  // [N]
  Value mg = b.broadcast_to(b.convert(operand(c, v, margin), ct), f.x.type.dims);
  m.z = b.add(b.subtract(mg, b.broadcast_in_dim(xy, f.x.type.dims, {0})), f.x);
  m.active = logical_and(b, logical_not(b, m.onehot), b.compare(m.z, b.splat_float(f.x.type, 0), "GT"));
  m.p_is_2 = b.broadcast_to(b.compare(pv, b.constant_float(ct, 2), "EQ"), f.x.type.dims);
  m.weight_y = b.splat_float(f.x.type, 1);
  if (const Value* w = optional_operand(c, v, weight)) {
    if (w->type.numel() != f.c) throw std::invalid_argument(c.op + ": weight must have one value per class");
    Value wy = reduce_rows(b, b.select(m.onehot, b.broadcast_in_dim(b.reshape(b.convert(*w, ct), {f.c}), it.dims, {1}),
                                      b.splat_float(f.x.type, 0)),
                           1);
    m.weight_y = b.broadcast_in_dim(wy, f.x.type.dims, {0});
  }
  return m;
}

TORCH_TPU_LOWERING("multi_margin_loss", [](Builder& b, const OpCall& c, const Values& v) {
  MultiMargin m = multi_margin(b, c, v, 0, 1, 2, 3, 4, "multi_margin_loss_cpu_kernel");
  Value h = b.select(m.p_is_2, b.multiply(m.z, m.z), m.z);
  Value terms = b.select(m.active, b.multiply(h, m.weight_y), b.splat_float(h.type, 0));
  Value per = b.divide(reduce_rows(b, terms, 1), b.splat_float(TensorType(h.type.dtype, {m.f.n}), static_cast<double>(m.f.c)));
  return Values{finish(b, per, c.arg(5).i, c.outputs[0])};
});

// multi_margin_loss_backward(grad_output, self, target, p, margin, weight?, reduction)
TORCH_TPU_LOWERING("multi_margin_loss_backward", [](Builder& b, const OpCall& c, const Values& v) {
  MultiMargin m = multi_margin(b, c, v, 1, 2, 3, 4, 5, "multi_margin_loss_backward_cpu_kernel");
  const TensorType& xt = m.f.x.type;
  Value g = b.broadcast_in_dim(upstream(b, operand(c, v, 0), c.arg(6).i, m.f.n, xt.dtype), xt.dims, {0});
  Value slope = b.select(m.p_is_2, b.multiply(m.z, b.splat_float(xt, 2)), b.splat_float(xt, 1));
  Value gj = b.select(m.active, b.divide(b.multiply(slope, m.weight_y), b.splat_float(xt, static_cast<double>(m.f.c))),
                      b.splat_float(xt, 0));
  Value gy = b.broadcast_in_dim(reduce_rows(b, gj, 1), xt.dims, {0});
  Value gi = b.multiply(b.select(m.onehot, b.negate(gy), gj), g);
  return Values{b.reshape(b.convert(gi, c.outputs[0].dtype), c.outputs[0].dims)};
});

// --- multilabel_margin_loss --------------------------------------------------

struct MultiLabel {
  Frame f;
  Value valid;      // [N, J]: target j counts (before the first -1)
  Value is_target;  // [N, C]
  Value active;     // [N, J, C]: valid j, non-target k, 1 - x_t + x_k > 0
};

MultiLabel multilabel(Builder& b, const OpCall& c, const Values& v, size_t self, size_t target, const char* kernel,
                      int is_target_arg = -1) {
  MultiLabel m{frame(b, c, operand(c, v, self), kernel), {}, {}, {}};
  const Frame& f = m.f;
  const Value& tv = operand(c, v, target);
  // target (and the backward's is_target) must have self's shape: the CPU's checkSameSize.
  if (tv.type.dims != operand(c, v, self).type.dims)
    throw std::invalid_argument("argument #" + std::to_string(target + 1) + " 'target' is out of range");
  if (is_target_arg >= 0 && operand(c, v, is_target_arg).type.dims != operand(c, v, self).type.dims)
    throw std::invalid_argument("argument #" + std::to_string(is_target_arg + 1) + " 'is_target' is out of range");
  Value t = b.reshape(b.convert(tv, DType::I64), {f.n, f.c});
  TensorType jt(DType::I64, {f.n, f.c});
  // valid: no -1 at or before j (a running count of negatives, inclusive).
  Value neg = b.convert(b.compare(t, b.splat_int(jt, 0), "LT"), DType::I64);
  Value seen = neg;
  for (int64_t shift = 1; shift < f.c; shift *= 2) {
    Value padded = b.pad(seen, b.constant_int(DType::I64, 0), {0, shift}, {0, 0}, {0, 0});
    seen = b.add(seen, b.slice(padded, {0, 0}, {f.n, f.c}, {1, 1}));
  }
  m.valid = b.compare(seen, b.splat_int(jt, 0), "EQ");
  Value bad = logical_and(b, m.valid, b.compare(t, b.splat_int(jt, f.c), "GE"));
  runtime_check(b, bad, "target out of range");
  std::vector<int64_t> njc{f.n, f.c, f.c};
  TensorType nt(DType::I64, njc);
  Value hit = logical_and(b, b.broadcast_in_dim(m.valid, njc, {0, 1}),
                          b.compare(b.broadcast_in_dim(t, njc, {0, 1}), b.iota(nt, 2), "EQ"));  // [N, J, K]
  m.is_target = b.reduce({hit}, {b.constant_bool(false)}, {1},
                         [](Builder& r, const Values& q) { return Values{r.binary("or", q[0], q[1])}; })[0];
  TensorType xt(f.x.type.dtype, njc);
  Value xk = b.broadcast_in_dim(f.x, njc, {0, 2});
  Value x_t = reduce_rows(b, b.select(hit, xk, b.splat_float(xt, 0)), 2);  // [N, J]
  Value z = b.add(b.subtract(b.splat_float(xt, 1), b.broadcast_in_dim(x_t, njc, {0, 1})), xk);
  m.active = logical_and(b, logical_and(b, b.broadcast_in_dim(m.valid, njc, {0, 1}),
                                        logical_not(b, b.broadcast_in_dim(m.is_target, njc, {0, 2}))),
                         b.compare(z, b.splat_float(xt, 0), "GT"));
  m.active = b.select(m.active, z, b.splat_float(xt, 0));  // the positive margins (0 elsewhere)
  return m;
}

// multilabel_margin_loss_forward(self, target, reduction) -> (output, is_target)
TORCH_TPU_LOWERING("multilabel_margin_loss_forward", [](Builder& b, const OpCall& c, const Values& v) {
  MultiLabel m = multilabel(b, c, v, 0, 1, "multilabel_margin_loss_forward_out_frame");
  Value sum = reduce_rows(b, reduce_rows(b, m.active, 2), 1);  // [N]
  Value per = b.divide(sum, b.splat_float(sum.type, static_cast<double>(m.f.c)));
  const TensorType& it = c.outputs[1];
  Value is_t = b.reshape(b.convert(m.is_target, it.dtype), it.dims);
  return Values{finish(b, per, c.arg(2).i, c.outputs[0]), is_t};
});

// multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target)
TORCH_TPU_LOWERING("multilabel_margin_loss_backward", [](Builder& b, const OpCall& c, const Values& v) {
  MultiLabel m = multilabel(b, c, v, 1, 2, "multilabel_margin_loss_backward_out_frame", 4);
  const TensorType& xt = m.f.x.type;
  std::vector<int64_t> njc{m.f.n, m.f.c, m.f.c};
  Value on = b.convert(b.compare(m.active, b.splat_float(m.active.type, 0), "GT"), xt.dtype);  // [N, J, K]
  Value per_k = reduce_rows(b, on, 1);                                                       // [N, K]: + for k
  Value per_j = reduce_rows(b, on, 2);                                                       // [N, J]: - for t_j
  // Move each j's count to class t_j: the target one-hot [N, J, K] again.
  TensorType jt(DType::I64, {m.f.n, m.f.c});
  Value t = b.reshape(b.convert(operand(c, v, 2), DType::I64), {m.f.n, m.f.c});
  TensorType nt(DType::I64, njc);
  Value hit = logical_and(b, b.broadcast_in_dim(m.valid, njc, {0, 1}),
                          b.compare(b.broadcast_in_dim(t, njc, {0, 1}), b.iota(nt, 2), "EQ"));
  Value minus = reduce_rows(b, b.select(hit, b.broadcast_in_dim(per_j, njc, {0, 1}), b.splat_float(TensorType(xt.dtype, njc), 0)), 1);
  Value g = b.broadcast_in_dim(upstream(b, operand(c, v, 0), c.arg(3).i, m.f.n, xt.dtype), xt.dims, {0});
  Value gi = b.multiply(b.divide(b.subtract(per_k, minus), b.splat_float(xt, static_cast<double>(m.f.c))), g);
  return Values{b.reshape(b.convert(gi, c.outputs[0].dtype), c.outputs[0].dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
