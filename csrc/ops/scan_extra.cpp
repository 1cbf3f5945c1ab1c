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
  if (x.type.rank() == 0) return {x, b.splat_int(ot, 0)};
  int64_t dim = c.arg(1).i < 0 ? c.arg(1).i + x.type.rank() : c.arg(1).i;
  int64_t n = x.type.dims[dim];
  Value idx = b.iota(TensorType(DType::I64, x.type.dims), dim);
  if (x.type.numel() == 0) return {x, b.convert(idx, ot.dtype)};
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

// log(exp(a) + exp(b)) as the CPU computes it: max + log1p(exp(min - max)),
// NaN if either is; equal infinities give themselves.
Value log_add_exp(Builder& b, const Value& x, const Value& y) {
  Value mn = b.minimum(x, y), mx = b.maximum(x, y);
  Value r = b.add(mx, b.unary("log_plus_one", b.unary("exponential", b.subtract(mn, mx))));
  Value same_inf = b.binary("and", b.compare(mn, mx, "EQ"), is_nan(b, b.subtract(mn, mn)));  // inf - inf
  r = b.select(same_inf, x, r);
  return b.select(b.binary("or", is_nan(b, x), is_nan(b, y)), b.add(x, y), r);
}

// logcumsumexp(self, dim)
Values logcumsumexp_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  // The CPU's acc_type is double for float; f32 here keeps the program
  // TPU-portable (widest_internal_type), within float's rounding of it.
  DType acc = out.dtype == DType::F64 ? DType::F64 : DType::F32;
  Value x = b.convert(operand(c, v, 0), acc);
  if (x.type.rank() == 0 || x.type.numel() == 0) return {b.convert(x, out.dtype)};
  int64_t dim = c.arg(1).i < 0 ? c.arg(1).i + x.type.rank() : c.arg(1).i;
  Value fill = b.constant_float(x.type.dtype, -INFINITY);
  for (int64_t shift = 1; shift < x.type.dims[dim]; shift *= 2)
    x = log_add_exp(b, x, shift_along(b, x, dim, shift, fill));
  return {b.convert(x, out.dtype)};
}

// logcumsumexp (not _logcumsumexp, which has no meta kernel for the output type).
TORCH_TPU_LOWERING("logcumsumexp", logcumsumexp_rule);

}  // namespace
}  // namespace torch_tpu::ops
