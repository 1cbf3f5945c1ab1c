// Reductions that return an index: max.dim/min.dim (values + indices) and
// argmax/argmin. One variadic reduce over (values, iota indices) whose
// combiner is commutative and associative, so XLA's reduction order cannot
// change the answer: the larger (smaller) value wins, NaN beats every number
// (NaN propagates like the CPU), and ties keep the smaller index (the CPU
// returns the first occurrence).
#include <algorithm>
#include <limits>
#include <optional>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

// The reduction's starting value: one no element can lose to.
Value identity(Builder& b, DType t, bool is_max) {
  if (hlo::is_float(t)) return b.constant_float(t, (is_max ? -1 : 1) * std::numeric_limits<double>::infinity());
  if (t == DType::Pred) return b.constant_bool(!is_max);
  int bits = hlo::dtype_bits(t);
  if (hlo::is_unsigned(t)) return b.constant_int(t, is_max ? 0 : (bits == 64 ? -1 : (int64_t{1} << bits) - 1));
  if (is_max) return b.constant_int(t, bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)));
  return b.constant_int(t, bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1);
}

// (v1, i1, v2, i2) -> the winning (value, index).
Values pick(Builder& r, const Values& a, bool is_max) {
  const Value &v1 = a[0], &i1 = a[1], &v2 = a[2], &i2 = a[3];
  Value better = r.compare(v1, v2, is_max ? "GT" : "LT");
  Value tie = r.compare(v1, v2, "EQ");
  if (hlo::is_float(v1.type.dtype)) {
    Value n1 = r.compare(v1, v1, "NE"), n2 = r.compare(v2, v2, "NE");
    better = r.binary("or", better, r.binary("and", n1, r.unary("not", n2)));
    tie = r.binary("or", tie, r.binary("and", n1, n2));
  }
  Value first = r.binary("or", better, r.binary("and", tie, r.compare(i1, i2, "LT")));
  return {r.select(first, v1, v2), r.select(first, i1, i2)};
}

// Reduces `x` over `dim` (nullopt: every element, flattened); returns the
// winning values and int64 indices with the reduced dim removed.
Values index_reduce(Builder& b, Value x, std::optional<int64_t> dim, bool is_max) {
  int64_t rank = x.type.rank();
  int64_t d = dim ? (*dim < 0 ? *dim + std::max<int64_t>(rank, 1) : *dim) : 0;
  // No identity to return for an empty slice; the CPU kernel (not the meta
  // one) raises this (as IndexError).
  if ((dim && rank > 0 && x.type.dims[d] == 0) || (!dim && x.type.numel() == 0))
    throw std::invalid_argument("Expected reduction dim " + std::to_string(d) + " to have non-zero size.");
  if (!dim || rank == 0) {
    x = b.reshape(x, {x.type.numel()});
    d = 0;
  }
  Value idx = b.iota(x.type.with_dtype(DType::I64), d);
  Value init_v = identity(b, x.type.dtype, is_max);
  Value init_i = b.constant_int(DType::I64, std::numeric_limits<int64_t>::max());
  return b.reduce({x, idx}, {init_v, init_i}, {d},
                  [is_max](Builder& r, const Values& a) { return pick(r, a, is_max); });
}

// max.dim / min.dim(self, dim, keepdim) -> (values, indices)
template <bool kMax>
Values values_indices_rule(Builder& b, const OpCall& c, const Values& v) {
  Values r = index_reduce(b, operand(c, v, 0), c.arg(1).i, kMax);
  return {b.reshape(r[0], c.outputs[0].dims), b.reshape(r[1], c.outputs[1].dims)};
}
TORCH_TPU_LOWERING("max.dim", values_indices_rule<true>);
TORCH_TPU_LOWERING("min.dim", values_indices_rule<false>);

// argmax / argmin(self, dim?, keepdim)
template <bool kMax>
Values arg_rule(Builder& b, const OpCall& c, const Values& v) {
  // The CPU kernel (not the meta one) rejects bool.
  if (operand(c, v, 0).type.dtype == DType::Pred)
    throw std::invalid_argument(std::string(kMax ? "argmax" : "argmin") + "(): does not support bool input");
  std::optional<int64_t> dim;
  if (!c.arg(1).is_none()) dim = c.arg(1).i;
  Values r = index_reduce(b, operand(c, v, 0), dim, kMax);
  return {b.reshape(r[1], c.outputs[0].dims)};
}
TORCH_TPU_LOWERING("argmax", arg_rule<true>);
TORCH_TPU_LOWERING("argmin", arg_rule<false>);

}  // namespace
}  // namespace torch_tpu::ops
