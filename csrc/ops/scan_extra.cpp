// cummax / cummin (values and indices) and logcumsumexp, as Hillis-Steele
// prefix scans like scan.cpp: log2(n) rounds combining each element with the
// one 2^k earlier. The combines below take an earlier and a later partial
// result, so they need only associativity, not commutativity.
#include <cmath>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// x shifted by `shift` along dim (x[i - shift]), `fill` in front.
Value shift_along(Builder& b, const Value& x, int64_t dim, int64_t shift, const Value& fill) {
  int64_t rank = x.type.rank();
  std::vector<int64_t> zeros(rank, 0), ones(rank, 1), low(rank, 0);
  low[dim] = shift;
  return b.slice(b.pad(x, fill, low, zeros, zeros), zeros, x.type.dims, ones);
}

Value is_nan(Builder& b, const Value& x) { return b.compare(x, x, "NE"); }

// cummax / cummin(self, dim) -> (values, indices): like the CPU, a later
// element replaces the running extreme when it is NaN or >= (<=) it while the
// running one is not NaN, so ties and NaNs report the latest index.
Values cum_extreme(Builder& b, const OpCall& c, const Values& v, bool max) {
  Value x = operand(c, v, 0);
  const TensorType& ot = c.outputs[1];
  // a 0-d dim is checked by the CPU kernel (eager/cpu_argument_checks.cpp);
  // an empty input's dim is checked by nobody on the CPU
  if (x.type.rank() == 0 || x.type.numel() == 0) return {x, b.splat_int(ot, 0)};
  int64_t dim = wrap_dim(c.arg(1).i, x.type.rank());
  int64_t n = x.type.dims[dim];
  Value idx = b.iota(TensorType(DType::I64, x.type.dims), dim);
  bool fl = hlo::is_float(x.type.dtype);
  Value vfill = max ? b.lowest(x.type.dtype) : b.highest(x.type.dtype);
  Value ifill = b.constant_int(DType::I64, -1);
  for (int64_t shift = 1; shift < n; shift *= 2) {
    Value ev = shift_along(b, x, dim, shift, vfill), ei = shift_along(b, idx, dim, shift, ifill);
    Value later = b.compare(x, ev, max ? "GE" : "LE");
    if (fl) later = b.binary("or", is_nan(b, x), b.binary("and", later, b.unary("not", is_nan(b, ev))));
    later = b.binary("or", later, b.compare(ei, b.splat_int(ei.type, 0), "LT"));  // nothing earlier
    x = b.select(later, x, ev);
    idx = b.select(later, idx, ei);
  }
  return {x, b.convert(idx, ot.dtype)};
}

TORCH_TPU_LOWERING("cummax", [](Builder& b, const OpCall& c, const Values& v) { return cum_extreme(b, c, v, true); });
TORCH_TPU_LOWERING("cummin", [](Builder& b, const OpCall& c, const Values& v) { return cum_extreme(b, c, v, false); });

// logcumsumexp(self, dim) as a scan of pairs (m, s): m the running maximum,
// s the sum of exp(x - m) (in [1, n]); an earlier (m1, s1) and a later
// (m2, s2) combine to (M, s1 e^(m1 - M) + s2 e^(m2 - M)), M = max(m1, m2), with
// weight 1 where m == M (ties, and infinite M: all -inf gives -inf, +inf
// wins), NaN propagating through M. The result m + log(s) rounds once at the
// magnitude of x, like the CPU's sequential double accumulator; rounding
// max + log1p(exp(min - max)) to f32 in each of the log2(n) rounds lost ulps
// at |x| ~ 1e4, which logcumsumexp's backward (exp of a logcumsumexp of
// log|grad| - result, + self) turned into 1e-3 relative gradient errors.
Values logcumsumexp_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) not_implemented_for("logcumsumexp_out_cpu", out.dtype);  // as the CPU (XLA: a compile error)
  // The CPU's acc_type is double for float; f32 here keeps the program
  // TPU-portable (widest_internal_type), within float's rounding of it.
  DType acc = out.dtype == DType::F64 ? DType::F64 : DType::F32;
  Value x = b.convert(operand(c, v, 0), acc);
  int64_t dim = wrap_dim(c.arg(1).i, x.type.rank());
  if (x.type.rank() == 0 || x.type.numel() == 0) return {b.convert(x, out.dtype)};
  Value m = x, s = b.splat_float(x.type, 1);
  Value neg_inf = b.constant_float(acc, -INFINITY), zero = b.constant_float(acc, 0);
  auto weight = [&](const Value& mi, const Value& big) {
    return b.select(b.compare(mi, big, "EQ"), b.splat_float(x.type, 1), b.unary("exponential", b.subtract(mi, big)));
  };
  for (int64_t shift = 1; shift < x.type.dims[dim]; shift *= 2) {
    Value m1 = shift_along(b, m, dim, shift, neg_inf), s1 = shift_along(b, s, dim, shift, zero);
    Value big = b.maximum(m1, m);
    s = b.add(b.multiply(s1, weight(m1, big)), b.multiply(s, weight(m, big)));
    m = big;
  }
  return {b.convert(b.add(m, b.unary("log", s)), out.dtype)};
}

// logcumsumexp (not _logcumsumexp, which has no meta kernel for the output type).
TORCH_TPU_LOWERING("logcumsumexp", logcumsumexp_rule);

}  // namespace
}  // namespace torch_tpu::ops
