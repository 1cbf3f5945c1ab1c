// Helpers shared by the elementwise families (arithmetic, comparison, unary
// math, pointwise misc): operands lifted into the dtype the CPU computes in,
// constants shaped like a value, and the float predicates several rules need.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>

#include "ops/lowering_error.h"
#include "ops/lowering_helpers.h"
#include "ops/runtime_check.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops::ew {

// Operand of argument `i` as PyTorch's TensorIterator feeds it to a kernel:
// cast to the common dtype `common`, then widened to `compute` (f32 for half
// types), broadcast to `dims`.
inline Value lift(Builder& b, const OpCall& c, const Values& v, size_t i, DType common, DType compute,
                  const std::vector<int64_t>& dims) {
  return b.broadcast_to(b.convert(b.convert(operand(c, v, i), common), compute), dims);
}

// A scalar the CPU kernel reads straight into its compute dtype (Scalar
// arguments such as lerp's weight, and a 0-d divisor or multiplier, which
// mul/div read with original_scalar_value): no rounding to a half result dtype.
inline Value lift_scalar(Builder& b, const OpCall& c, const Values& v, size_t i, DType common, DType compute,
                         const std::vector<int64_t>& dims) {
  const Value& x = operand(c, v, i);
  if (x.type.rank() != 0 || !hlo::is_float(compute)) return lift(b, c, v, i, common, compute, dims);
  return b.broadcast_to(b.convert(x, compute), dims);
}

// A constant of `like`'s type.
inline Value full_like(Builder& b, const Value& like, double x) { return b.splat_float(like.type, x); }
inline Value zeros_like(Builder& b, const Value& like) { return b.splat_int(like.type, 0); }

inline Value is_nan(Builder& b, const Value& x) { return b.compare(x, x, "NE"); }
inline Value is_neg(Builder& b, const Value& x) { return b.compare(x, zeros_like(b, x), "LT"); }
inline Value not_zero(Builder& b, const Value& x) { return b.compare(x, zeros_like(b, x), "NE"); }
inline Value logical_and(Builder& b, const Value& x, const Value& y) { return b.binary("and", x, y); }
inline Value logical_or(Builder& b, const Value& x, const Value& y) { return b.binary("or", x, y); }
inline Value logical_not(Builder& b, const Value& x) { return b.unary("not", x); }

// Rounds toward zero (StableHLO has floor/ceil, no trunc); keeps -0 and NaN.
inline Value trunc(Builder& b, const Value& x) {
  return b.select(is_neg(b, x), b.unary("ceil", x), b.unary("floor", x));
}

// out = f(x) for a float-valued unary op: ints/bools promote to the float
// result dtype, half types compute in f32 like the CPU kernels.
inline Values unary_float(Builder& b, const OpCall& c, const Values& v,
                          const std::function<Value(Builder&, const Value&)>& f) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) throw std::invalid_argument("unsupported result dtype " + out.str());
  DType ct = compute_type(out.dtype);
  Value x = lift(b, c, v, 0, out.dtype, ct, out.dims);
  return Values{b.convert(f(b, x), out.dtype)};
}

// out = f(x, y) in the compute dtype of the result, for two tensor/scalar
// arguments promoted together; `scalar_rhs`: a 0-d y skips the half rounding.
inline Values binary_compute(Builder& b, const OpCall& c, const Values& v, size_t i, size_t j,
                             const std::function<Value(Builder&, const Value&, const Value&)>& f,
                             bool scalar_rhs = false) {
  const TensorType& out = c.outputs[0];
  DType ct = compute_type(out.dtype);
  Value x = lift(b, c, v, i, out.dtype, ct, out.dims);
  Value y = scalar_rhs ? lift_scalar(b, c, v, j, out.dtype, ct, out.dims) : lift(b, c, v, j, out.dtype, ct, out.dims);
  return Values{b.convert(f(b, x, y), out.dtype)};
}

// True when any element of the bool tensor `pred` is (0-d i1).
inline Value any(Builder& b, const Value& pred) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < pred.type.rank(); ++d) all.push_back(d);
  return b.reduce({pred}, {b.constant_bool(false)}, all,
                  [](Builder& r, const Values& a) { return Values{r.binary("or", a[0], a[1])}; })[0];
}

// A RuntimeError raised at the next synchronization when `failed` (any shape) holds.
inline void runtime_check(Builder& b, const Value& failed, const std::string& message) {
  add_runtime_check(failed.type.rank() ? any(b, failed) : failed, CheckKind::Runtime, message);
}

// Mirrors the CPU kernels' "not implemented for 'Bool'" dtype checks, which
// the meta kernels do not make: NotImplementedError naming the kernel and the
// dtype it dispatched on (the result's), as the CPU does.
inline void reject_dtype(const OpCall& c, bool bad, const char* what) {
  if (bad) not_implemented_for(what, c.outputs.at(0).dtype);
}

}  // namespace torch_tpu::ops::ew
