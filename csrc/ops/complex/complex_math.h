// Helpers the complex rules share (ops/complex/).
#pragma once
#include <limits>

#include "ops/elementwise_common.h"

namespace torch_tpu::ops::complex_math {

// The reciprocal 1 / d as a pair (k / d, 1 / k) whose product is the CPU's:
// past |d| = 2^64 (2^512 for float64), 1 / d is subnormal, which XLA's CPU
// flushes to zero (3e38 / 3e38 came out 0). Scaling by an exact power of
// two k keeps it normal; x * (k / d) * (1 / k) then rounds as x * (1 / d).
struct Reciprocal {
  Value scaled, unscale;
};
inline Reciprocal reciprocal(Builder& b, const Value& d) {
  const double k = d.type.dtype == DType::F64 ? 0x1p512 : 0x1p64;
  Value big = b.compare(b.unary("abs", d), ew::full_like(b, d, k), "GE");
  Value num = b.select(big, ew::full_like(b, d, k), ew::full_like(b, d, 1));
  return {b.divide(num, d), b.select(big, ew::full_like(b, d, 1 / k), ew::full_like(b, d, 1))};
}
inline Value times(Builder& b, const Value& x, const Reciprocal& r) {
  return b.multiply(b.multiply(x, r.scaled), r.unscale);
}

// Complex x / y as the CPU's c10::complex divides (numpy's, Smith's
// algorithm): scaled by the larger of |re y|, |im y|, so special values come
// out as there (-1 / (inf + nan j) is NaN; XLA's divide gives 0).
inline Value divide(Builder& b, const Value& x, const Value& y) {
  Value p = b.real(x), q = b.imag(x), r = b.real(y), s = b.imag(y);
  Value abs_r = b.unary("abs", r), abs_s = b.unary("abs", s);
  // |r| >= |s|: ratio s / r
  Value rat1 = b.divide(s, r);
  Reciprocal scl1 = reciprocal(b, b.add(r, b.multiply(s, rat1)));
  Value re1 = times(b, b.add(p, b.multiply(q, rat1)), scl1);
  Value im1 = times(b, b.subtract(q, b.multiply(p, rat1)), scl1);
  // both zero: a complex inf or NaN, part by part
  Value zero = ew::zeros_like(b, p);
  Value both_zero = ew::logical_and(b, b.compare(abs_r, zero, "EQ"), b.compare(abs_s, zero, "EQ"));
  re1 = b.select(both_zero, b.divide(p, abs_r), re1);
  im1 = b.select(both_zero, b.divide(q, abs_s), im1);
  // otherwise: ratio r / s
  Value rat2 = b.divide(r, s);
  Reciprocal scl2 = reciprocal(b, b.add(s, b.multiply(r, rat2)));
  Value re2 = times(b, b.add(b.multiply(p, rat2), q), scl2);
  Value im2 = times(b, b.subtract(b.multiply(q, rat2), p), scl2);
  Value first = b.compare(abs_r, abs_s, "GE");
  return b.complex(b.select(first, re1, re2), b.select(first, im1, im2));
}

// The sign bit of a real value (set for -0 too).
inline Value sign_bit(Builder& b, const Value& x) {
  DType bits = x.type.dtype == DType::F64 ? DType::I64 : DType::I32;
  Value i = b.bitcast_convert(x, x.type.with_dtype(bits));
  return b.compare(i, b.splat_int(i.type, 0), "LT");
}

// sqrt with C99's signs: Re >= 0 and Im carrying the sign of Im z, so that a
// -0 imaginary part takes the lower side of the cut (XLA's ignores it).
inline Value csqrt(Builder& b, const Value& z) {
  Value r = b.unary("sqrt", z);
  Value im = b.unary("abs", b.imag(r));
  return b.complex(b.unary("abs", b.real(r)), b.select(sign_bit(b, b.imag(z)), b.negate(im), im));
}

// The CPU's complex _log_add_exp_helper(x, y) with its _logcumsumexp_minmax:
// NaN (in either part) of either gives NaN + NaN i; min/max by real part, y
// first on ties; equal infinite real parts give min (-inf) or
// log(exp(min) + exp(max)) (+inf); else log1p(exp(min - max)) + max.
inline Value log_add_exp(Builder& b, const Value& x, const Value& y) {
  Value xr = b.real(x), yr = b.real(y);
  Value x_is_min = b.compare(xr, yr, "LT");
  Value lo = b.select(x_is_min, x, y), hi = b.select(x_is_min, y, x);
  Value lo_r = b.real(lo), hi_r = b.real(hi);
  Value nan = ew::logical_or(b, ew::logical_or(b, ew::is_nan(b, xr), ew::is_nan(b, b.imag(x))),
                         ew::logical_or(b, ew::is_nan(b, yr), ew::is_nan(b, b.imag(y))));
  Value inf_tie = ew::logical_and(b, b.compare(magnitude(b, lo_r), b.splat_float(lo_r.type, std::numeric_limits<double>::infinity()), "EQ"),
                              b.compare(lo_r, hi_r, "EQ"));
  Value neg_inf = b.compare(lo_r, b.splat_float(lo_r.type, 0), "LT");
  Value general = b.add(b.unary("log_plus_one", b.unary("exponential", b.subtract(lo, hi))), hi);
  Value pos_inf = b.unary("log", b.add(b.unary("exponential", lo), b.unary("exponential", hi)));
  Value r = b.select(inf_tie, b.select(neg_inf, lo, pos_inf), general);
  Value nan_c = b.complex(b.splat_float(xr.type, std::numeric_limits<double>::quiet_NaN()), b.splat_float(xr.type, std::numeric_limits<double>::quiet_NaN()));
  return b.select(nan, nan_c, r);
}

}  // namespace torch_tpu::ops::complex_math
