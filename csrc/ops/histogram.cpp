// histc: counts per equal-width bin, matching the CPU kernel bin for bin. The
// CPU computes a position from the range, then corrects it against the bin
// edges (a linspace) so that edge values land where the edges say; this rule
// does the same, in the input dtype, and scatter-adds the counts.
#include <cmath>
#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

Value reduce_all(Builder& b, const Value& x, const Value& init, const char* op) {
  std::vector<int64_t> dims{0};
  return b.reduce({x}, {init}, dims, [op](Builder& r, const Values& a) { return Values{r.binary(op, a[0], a[1])}; })[0];
}

// torch.linspace(lo, hi, steps)[k] for integer k (any shape): the CPU fills
// the first half forwards from lo and the second half backwards from hi.
Value linspace_at(Builder& b, const Value& k, const Value& lo, const Value& hi, int64_t steps) {
  const TensorType& t = k.type;
  DType f = lo.type.dtype;
  TensorType ft(f, t.dims);
  Value step = b.divide(b.subtract(hi, lo), b.constant_float(f, double(steps - 1)));
  Value kf = b.convert(k, f);
  Value fwd = b.add(b.broadcast_to(lo, t.dims), b.multiply(b.broadcast_to(step, t.dims), kf));
  Value back_n = b.convert(b.subtract(b.splat_int(t, steps - 1), k), f);
  Value bwd = b.subtract(b.broadcast_to(hi, t.dims), b.multiply(b.broadcast_to(step, t.dims), back_n));
  return b.select(b.compare(k, b.splat_int(t, steps / 2), "LT"), fwd, bwd);
}

// Args: (self, int bins, Scalar min, Scalar max).
Values histc_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType f = out.dtype;
  int64_t bins = c.arg(1).i;
  Value x = b.convert(operand(c, v, 0), f);
  int64_t n = x.type.numel();
  x = b.reshape(x, {n});
  Value lo = b.convert(operand(c, v, 2), f), hi = b.convert(operand(c, v, 3), f);
  // min == max: the data's range; a still-empty range widens by 1 each side.
  // (An empty input has no range: NaN, which the finiteness check rejects, like the CPU.)
  // Integer inputs (CUDA takes them, and Transformers' MoE passes them on
  // accelerators) bin with integer arithmetic, like CUDA's kernel.
  bool integral = !hlo::is_float(f);
  Value big = b.highest(f), small = b.lowest(f);
  Value none = integral ? b.constant_int(f, 0) : b.constant_float(f, NAN);
  Value dmin = n ? reduce_all(b, x, big, "minimum") : none;
  Value dmax = n ? reduce_all(b, x, small, "maximum") : none;
  Value use_data = b.compare(lo, hi, "EQ");
  lo = b.select(use_data, dmin, lo);
  hi = b.select(use_data, dmax, hi);
  Value same = b.compare(lo, hi, "EQ");
  Value one = integral ? b.constant_int(f, 1) : b.constant_float(f, 1);
  lo = b.select(same, b.subtract(lo, one), lo);
  hi = b.select(same, b.add(hi, one), hi);
  add_runtime_check(b.compare(lo, hi, "GT"), CheckKind::Runtime, "torch.histc: max must be larger than min");
  if (!integral) {
    auto is_finite = [&](const Value& s) { return b.emit1("is_finite", {s}, "", TensorType(DType::Pred, {})); };
    Value finite = b.binary("and", is_finite(lo), is_finite(hi));
    add_runtime_check(b.unary("not", finite), CheckKind::Runtime, "torch.histc: range of [min, max] is not finite");
  }
  if (n == 0) return {b.splat_int(out, 0)};

  TensorType it(DType::I64, {n});
  std::vector<int64_t> d{n};
  Value lob = b.broadcast_to(lo, d), hib = b.broadcast_to(hi, d);
  Value in_range = b.binary("and", b.compare(x, lob, "GE"), b.compare(x, hib, "LE"));
  Value zero = b.splat_int(it, 0), edges_last = b.splat_int(it, bins);
  Value pos;
  if (integral) {
    Value xi = b.convert(x, DType::I64), loi = b.convert(lob, DType::I64), hii = b.convert(hib, DType::I64);
    pos = b.divide(b.multiply(b.subtract(xi, loi), b.splat_int(it, bins)), b.subtract(hii, loi));
    pos = b.select(b.compare(pos, edges_last, "EQ"), b.subtract(edges_last, b.splat_int(it, 1)), pos);
    pos = b.select(in_range, b.maximum(pos, zero), zero);
    return {b.scatter_elements_1d(b.splat_int(out, 0), pos, b.convert(in_range, f), "add")};
  }
  // pos = trunc((x - lo) * bins / (hi - lo)), in the input dtype like the CPU.
  Value scaled = b.divide(b.multiply(b.subtract(x, lob), b.splat_float(TensorType(f, d), double(bins))),
                          b.subtract(hib, lob));
  pos = b.convert(b.select(in_range, scaled, b.splat_float(TensorType(f, d), 0)), DType::I64);
  // upper_bound over the edges pos-1 .. pos+1 (clipped to [0, bins]) - 1.
  Value pmin = b.maximum(b.subtract(pos, b.splat_int(it, 1)), zero);
  Value pmax = b.minimum(b.add(pos, b.splat_int(it, 2)), b.splat_int(it, bins + 1));
  Value count = zero;
  for (int k = 0; k < 3; ++k) {
    Value e = b.add(pmin, b.splat_int(it, k));
    Value edge = linspace_at(b, b.minimum(e, edges_last), lo, hi, bins + 1);
    Value hit = b.binary("and", b.compare(e, pmax, "LT"), b.compare(edge, x, "LE"));
    count = b.add(count, b.convert(hit, DType::I64));
  }
  pos = b.subtract(b.add(pmin, count), b.splat_int(it, 1));
  pos = b.select(b.compare(pos, edges_last, "EQ"), b.subtract(edges_last, b.splat_int(it, 1)), pos);
  // Out-of-range and NaN elements add 0 at bin 0.
  pos = b.select(in_range, b.maximum(pos, zero), zero);
  Value w = b.convert(in_range, f);
  return {b.scatter_elements_1d(b.splat_float(out, 0), pos, w, "add")};
}

TORCH_TPU_LOWERING("histc", histc_rule);

}  // namespace
}  // namespace torch_tpu::ops
