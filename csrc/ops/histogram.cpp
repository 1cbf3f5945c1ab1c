// histc: counts per equal-width bin, matching the CPU kernel bin for bin: the
// outer edges come from a linspace over the range in the input dtype, each
// element's bin from interpolating between them, and the counts are
// scatter-added.
#include <cmath>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

Value reduce_all(Builder& b, const Value& x, const Value& init, const char* op) {
  std::vector<int64_t> dims{0};
  return b.reduce({x}, {init}, dims, [op](Builder& r, const Values& a) { return Values{r.binary(op, a[0], a[1])}; })[0];
}

// torch.linspace(lo, hi, steps)[k] for integer k (any shape), as the CPU's
// kernel computes it in the output dtype: start, end and step rounded to it,
// every operation rounded again (bfloat16 included), the first half counted
// forwards from start and the second half backwards from end.
Value linspace_at(Builder& b, const Value& k, const Value& lo, const Value& hi, int64_t steps, DType out) {
  const TensorType& t = k.type;
  DType f = compute_type(out);
  auto rnd = [&](const Value& v) { return b.convert(b.convert(v, out), f); };  // one rounding to `out`
  Value start = rnd(lo), end = rnd(hi);
  Value step = rnd(b.divide(rnd(b.subtract(end, start)), b.constant_float(f, double(steps - 1))));
  Value fwd = rnd(b.add(b.broadcast_to(start, t.dims), rnd(b.multiply(b.broadcast_to(step, t.dims), b.convert(k, f)))));
  Value back_n = b.convert(b.subtract(b.splat_int(t, steps - 1), k), f);
  Value bwd = rnd(b.subtract(b.broadcast_to(end, t.dims), rnd(b.multiply(b.broadcast_to(step, t.dims), back_n))));
  return b.convert(b.select(b.compare(k, b.splat_int(t, steps / 2), "LT"), fwd, bwd), out);
}

// Args: (self, int bins, Scalar min, Scalar max).
Values histc_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  // The CPU's first step for bool, its bin edges' linspace, has no bool kernel (XLA: a compile error).
  if (out.dtype == DType::Pred) not_implemented_for("linspace_cpu", DType::Pred);
  DType f = out.dtype;
  int64_t bins = c.arg(1).i;
  Value x = b.convert(operand(c, v, 0), f);
  int64_t n = x.type.numel();
  x = b.reshape(x, {n});
  // The range is kept in the compute type (the CPU keeps it in double) and
  // only the bin edges are rounded to the input dtype.
  // min == max: the data's range; a still-empty range widens by 1 each side.
  // Integer inputs (CUDA takes them, and Transformers' MoE passes them on
  // accelerators) bin with integer arithmetic, like CUDA's kernel.
  bool integral = !hlo::is_float(f);
  DType r = integral ? f : compute_type(f);
  Value lo = b.convert(operand(c, v, 2), r), hi = b.convert(operand(c, v, 3), r);
  Value big = b.highest(f), small = b.lowest(f);
  if (n > 0) {  // (an empty input keeps min == max and widens below, like the CPU)
    Value dmin = reduce_all(b, x, big, "minimum"), dmax = reduce_all(b, x, small, "maximum");
    if (!integral) {  // XLA's min/max reductions drop NaN; the CPU's range becomes NaN
      Value nan = b.constant_float(f, NAN);
      Value has_nan = reduce_all(b, b.compare(x, x, "NE"), b.constant_bool(false), "or");
      dmin = b.select(has_nan, nan, dmin);
      dmax = b.select(has_nan, nan, dmax);
    }
    dmin = b.convert(dmin, r), dmax = b.convert(dmax, r);
    Value use_data = b.compare(lo, hi, "EQ");
    lo = b.select(use_data, dmin, lo);
    hi = b.select(use_data, dmax, hi);
  }
  Value same = b.compare(lo, hi, "EQ");
  Value one = integral ? b.constant_int(r, 1) : b.constant_float(r, 1);
  lo = b.select(same, b.subtract(lo, one), lo);
  hi = b.select(same, b.add(hi, one), hi);
  add_runtime_check(b.compare(lo, hi, "GT"), CheckKind::Runtime, "torch.histc: max must be larger than min");
  if (!integral) {
    Value finite = b.binary("and", b.is_finite(lo), b.is_finite(hi));
    add_runtime_check(b.unary("not", finite), CheckKind::Runtime, "torch.histc: range of [min, max] is not finite");
  }
  if (n == 0) return {b.splat_int(out, 0)};

  TensorType it(DType::I64, {n});
  std::vector<int64_t> d{n};
  Value lob, hib;  // the outer edges, in x's dtype
  if (integral) {
    lob = b.broadcast_to(lo, d), hib = b.broadcast_to(hi, d);
  } else {
    lob = b.broadcast_to(linspace_at(b, b.constant_int(DType::I64, 0), lo, hi, bins + 1, f), d);
    hib = b.broadcast_to(linspace_at(b, b.constant_int(DType::I64, bins), lo, hi, bins + 1, f), d);
  }
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
  // pos = trunc((x - edge0) * bins / (edgeN - edge0)), each operation rounded
  // to the input dtype like the CPU's kernel (histc interpolates only; unlike
  // torch.histogram it does not search the neighbouring edges).
  DType cf = compute_type(f);
  TensorType ct(cf, d);
  auto rnd = [&](const Value& v) { return b.convert(b.convert(v, f), cf); };
  Value xc = b.convert(x, cf), l = b.convert(lob, cf), h = b.convert(hib, cf);
  Value scaled = rnd(b.divide(rnd(b.multiply(rnd(b.subtract(xc, l)), b.splat_float(ct, double(bins)))),
                              rnd(b.subtract(h, l))));
  // Near the dtype's maximum (x - edge0) * bins overflows (the CPU's kernel
  // then bins wrongly, ours dropped the element): the fraction first.
  Value fraction_first = rnd(b.multiply(rnd(b.divide(rnd(b.subtract(xc, l)), rnd(b.subtract(h, l)))),
                                        b.splat_float(ct, double(bins))));
  scaled = b.select(b.is_finite(scaled), scaled, fraction_first);
  pos = b.convert(b.select(in_range, scaled, b.splat_float(ct, 0)), DType::I64);
  pos = b.select(b.compare(pos, edges_last, "EQ"), b.subtract(edges_last, b.splat_int(it, 1)), pos);
  // Out-of-range and NaN elements add 0 at bin 0.
  pos = b.select(in_range, b.maximum(pos, zero), zero);
  // Counted in float32 for half types: exact up to 2^24 per bin.
  DType acc = compute_type(f);
  Value counts = b.scatter_elements_1d(b.splat_float(out.with_dtype(acc), 0), pos, b.convert(in_range, acc), "add");
  return {b.convert(counts, f)};
}

TORCH_TPU_LOWERING("histc", histc_rule);

}  // namespace
}  // namespace torch_tpu::ops
