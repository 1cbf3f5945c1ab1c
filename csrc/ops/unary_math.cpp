// Unary float math (exp/log/trig/...) and rounding. Integer and bool inputs
// promote to the float result dtype from the meta kernel; half types compute
// in f32 like the CPU kernels. Ops StableHLO lacks come from CHLO (which XLA
// expands) or from short exact identities.
#include <cmath>

#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

Value op(Builder& b, const char* name, const Value& x) { return b.unary(name, x); }
Value scale(Builder& b, const Value& x, double k) { return b.multiply(x, full_like(b, x, k)); }

// CHLO's sinh/cosh compute exp(x + log(1/2)), whose rounding of the sum costs
// ~x ulps for large x; these stay within a few ulps of libm. Near overflow
// exp(|x|) is split as exp(|x|/2)^2 so the finite range is kept.
Value overflow_split(Builder& b, const Value& a) {  // |x| where exp(|x|) would overflow
  double limit = a.type.dtype == DType::F64 ? 709.0 : 88.0;
  return b.compare(a, full_like(b, a, limit), "GT");
}
Value half_exp_big(Builder& b, const Value& a) {  // exp(a) / 2 for large a
  Value e = op(b, "exponential", scale(b, a, 0.5));
  return b.multiply(scale(b, e, 0.5), e);
}
Value sinh(Builder& b, const Value& x) {
  Value a = op(b, "abs", x);
  Value e = op(b, "exponential_minus_one", a);  // sinh(a) = (e + e / (e + 1)) / 2
  Value small = scale(b, b.add(e, b.divide(e, b.add(e, full_like(b, e, 1)))), 0.5);
  Value r = b.select(overflow_split(b, a), half_exp_big(b, a), small);
  return b.select(is_neg(b, x), b.negate(r), r);  // keeps -0 and NaN
}
Value cosh(Builder& b, const Value& x) {
  Value a = op(b, "abs", x);
  Value e = op(b, "exponential", a);
  Value small = b.add(scale(b, e, 0.5), b.divide(full_like(b, e, 0.5), e));
  return b.select(overflow_split(b, a), half_exp_big(b, a), small);
}

// The CPU's digamma at 0 is copysign(inf, -x): -inf at +0, +inf at -0.
Value digamma(Builder& b, const Value& x) {
  Value r = op(b, "chlo.digamma", x);
  Value neg_zero = b.compare(b.divide(full_like(b, x, 1), x), full_like(b, x, 0), "LT");
  Value at_zero = b.select(neg_zero, full_like(b, x, INFINITY), full_like(b, x, -INFINITY));
  return b.select(b.compare(x, full_like(b, x, 0), "EQ"), at_zero, r);
}
// sin(pi x) / (pi x), 1 at 0; the product is rounded to the compute dtype first, like the CPU.
Value sinc(Builder& b, const Value& x) {
  Value px = scale(b, x, M_PI);
  Value r = b.divide(op(b, "sine", px), px);
  return b.select(b.compare(x, full_like(b, x, 0), "EQ"), full_like(b, x, 1), r);
}

#define TORCH_TPU_UNARY_FLOAT(name, ...)                                           \
  TORCH_TPU_LOWERING(name, [](Builder& b, const OpCall& c, const Values& v) {      \
    return unary_float(b, c, v, [](Builder& b, const Value& x) { return __VA_ARGS__; }); \
  })

TORCH_TPU_UNARY_FLOAT("exp", op(b, "exponential", x));
TORCH_TPU_UNARY_FLOAT("exp2", b.binary("power", full_like(b, x, 2), x));
TORCH_TPU_UNARY_FLOAT("expm1", op(b, "exponential_minus_one", x));
TORCH_TPU_UNARY_FLOAT("log", op(b, "log", x));
TORCH_TPU_UNARY_FLOAT("log2", scale(b, op(b, "log", x), 1 / std::log(2.0)));
TORCH_TPU_UNARY_FLOAT("log10", scale(b, op(b, "log", x), 1 / std::log(10.0)));
TORCH_TPU_UNARY_FLOAT("log1p", op(b, "log_plus_one", x));
TORCH_TPU_UNARY_FLOAT("sqrt", op(b, "sqrt", x));
// 1 / sqrt(x): two correctly rounded operations. (The CPU's float rsqrt is
// MKL's vsInvSqrt, within an ulp of this; its half types round that result, so
// about 2 in 10^4 float16 values differ from this by an ulp.)
TORCH_TPU_UNARY_FLOAT("rsqrt", b.divide(full_like(b, x, 1), op(b, "sqrt", x)));
TORCH_TPU_UNARY_FLOAT("sin", op(b, "sine", x));
TORCH_TPU_UNARY_FLOAT("cos", op(b, "cosine", x));
TORCH_TPU_UNARY_FLOAT("tan", op(b, "chlo.tan", x));
TORCH_TPU_UNARY_FLOAT("tanh", op(b, "tanh", x));
TORCH_TPU_UNARY_FLOAT("sigmoid", op(b, "logistic", x));
TORCH_TPU_UNARY_FLOAT("asin", op(b, "chlo.asin", x));
TORCH_TPU_UNARY_FLOAT("acos", op(b, "chlo.acos", x));
TORCH_TPU_UNARY_FLOAT("atan", b.binary("atan2", x, full_like(b, x, 1)));
TORCH_TPU_UNARY_FLOAT("sinh", sinh(b, x));
TORCH_TPU_UNARY_FLOAT("cosh", cosh(b, x));
TORCH_TPU_UNARY_FLOAT("erf", op(b, "chlo.erf", x));
TORCH_TPU_UNARY_FLOAT("erfc", op(b, "chlo.erfc", x));
TORCH_TPU_UNARY_FLOAT("erfinv", op(b, "chlo.erf_inv", x));
TORCH_TPU_UNARY_FLOAT("asinh", op(b, "chlo.asinh", x));
TORCH_TPU_UNARY_FLOAT("acosh", op(b, "chlo.acosh", x));
TORCH_TPU_UNARY_FLOAT("atanh", op(b, "chlo.atanh", x));
TORCH_TPU_UNARY_FLOAT("lgamma", op(b, "chlo.lgamma", x));
TORCH_TPU_UNARY_FLOAT("digamma", digamma(b, x));
TORCH_TPU_UNARY_FLOAT("sinc", sinc(b, x));
#undef TORCH_TPU_UNARY_FLOAT

// xlogy(x, y) = x * log(y), 0 where x == 0, NaN where y is NaN (the CPU's order);
// xlog1py likewise with log1p.
Values xlogy(Builder& b, const OpCall& c, const Values& v, const char* log_op) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) throw std::invalid_argument("unsupported result dtype " + out.str());
  return binary_compute(b, c, v, 0, 1, [log_op](Builder& b, const Value& x, const Value& y) {
    Value r = b.select(b.compare(x, full_like(b, x, 0), "EQ"), full_like(b, x, 0), b.multiply(x, op(b, log_op, y)));
    return b.select(is_nan(b, y), y, r);
  });
}
Values xlogy_log(Builder& b, const OpCall& c, const Values& v) { return xlogy(b, c, v, "log"); }
TORCH_TPU_LOWERING("xlogy.Tensor", xlogy_log);
TORCH_TPU_LOWERING("xlogy.Scalar_Self", xlogy_log);
TORCH_TPU_LOWERING("xlogy.Scalar_Other", xlogy_log);
TORCH_TPU_LOWERING("special_xlog1py", [](Builder& b, const OpCall& c, const Values& v) {
  return xlogy(b, c, v, "log_plus_one");
});

// logit(x, eps) = log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps
// is given (NaN stays NaN). The CPU kernel computes in the tensor's own dtype,
// rounding each step for half types, so this does too.
TORCH_TPU_LOWERING("logit", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  bool clamp = !c.arg(1).is_none() && c.arg(1).d >= 0;
  double eps = clamp ? c.arg(1).d : 0;
  Value x = to_type(b, operand(c, v, 0), out);
  if (clamp) {
    Value lo = full_like(b, x, eps), hi = full_like(b, x, 1 - eps);
    x = b.select(b.compare(x, lo, "LT"), lo, b.select(b.compare(x, hi, "GT"), hi, x));
  }
  return Values{op(b, "log", b.divide(x, b.subtract(full_like(b, x, 1), x)))};
});

// --- rounding: exact in the input dtype; integers are already whole ---------

Values rounding(Builder& b, const OpCall& c, const Values& v, const char* kernel,
                Value (*f)(Builder&, const Value&)) {
  const TensorType& out = c.outputs[0];
  reject_dtype(c, out.dtype == DType::Pred, kernel);
  Value x = to_type(b, operand(c, v, 0), out);
  return Values{hlo::is_float(out.dtype) ? f(b, x) : x};
}
TORCH_TPU_LOWERING("floor", [](Builder& b, const OpCall& c, const Values& v) {
  return rounding(b, c, v, "floor_vml_cpu", [](Builder& b, const Value& x) { return op(b, "floor", x); });
});
TORCH_TPU_LOWERING("ceil", [](Builder& b, const OpCall& c, const Values& v) {
  return rounding(b, c, v, "ceil_vml_cpu", [](Builder& b, const Value& x) { return op(b, "ceil", x); });
});
TORCH_TPU_LOWERING("trunc", [](Builder& b, const OpCall& c, const Values& v) {
  return rounding(b, c, v, "trunc_vml_cpu", [](Builder& b, const Value& x) { return trunc(b, x); });
});
// Half to even, like nearbyint in the default rounding mode.
TORCH_TPU_LOWERING("round", [](Builder& b, const OpCall& c, const Values& v) {
  return rounding(b, c, v, "round_vml_cpu", [](Builder& b, const Value& x) { return op(b, "round_nearest_even", x); });
});

// round(x, decimals): scale by 10^|decimals|, round half to even, scale back.
TORCH_TPU_LOWERING("round.decimals", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  reject_dtype(c, !hlo::is_float(out.dtype), "round_cpu");
  int64_t d = c.arg(1).i;
  double ten_pow = std::pow(10.0, static_cast<double>(d < 0 ? -d : d));
  return unary_float(b, c, v, [=](Builder& b, const Value& x) {
    Value k = full_like(b, x, ten_pow);
    if (d < 0) return b.multiply(op(b, "round_nearest_even", b.divide(x, k)), k);
    return b.divide(op(b, "round_nearest_even", b.multiply(x, k)), k);
  });
});

TORCH_TPU_LOWERING("frac", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  reject_dtype(c, !hlo::is_float(out.dtype), "frac_cpu");
  Value x = to_type(b, operand(c, v, 0), out);
  return Values{b.subtract(x, trunc(b, x))};
});

}  // namespace
}  // namespace torch_tpu::ops
