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

// A zero XLA cannot fold away (p * r + 0 -> p * r turns the CPU's -0 into
// +0: 1 / -1.5i = -0 + 0.67i), shaped like the real part `like`.
inline Value opaque_zero(Builder& b, const Value& like) {
  return b.broadcast_to(b.opaque(b.constant_float(like.type.dtype, 0)), like.type.dims);
}
// 1 + 0i shaped like z, as a dividend.
inline Value one(Builder& b, const Value& z) {
  Value re = b.splat_float(z.type.with_dtype(hlo::complex_component(z.type.dtype)), 1);
  return b.complex(re, opaque_zero(b, re));
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

// |m| with the sign of v (C's copysign, NaN's sign bit included).
inline Value copysign(Builder& b, const Value& m, const Value& v) {
  Value a = b.unary("abs", m);
  return b.select(sign_bit(b, v), b.negate(a), a);
}

// Where either part of z is infinite or NaN (StableHLO's formulas give NaN
// or a finite part there where C99, and so the CPU's std::complex, does not).
inline Value not_finite(Builder& b, const Value& z) {
  return ew::logical_not(b, ew::logical_and(b, b.is_finite(b.real(z)), b.is_finite(b.imag(z))));
}
inline Value is_inf(Builder& b, const Value& x) {
  return b.compare(b.unary("abs", x), ew::full_like(b, x, std::numeric_limits<double>::infinity()), "EQ");
}

// e^z with C99's special values, as the CPU's std::exp: e^a cos y + i e^a sin y,
// e^a + i y for a zero y (its sign kept, no inf * 0), and for a non-finite y
// e^(-inf + iy) = +0 + i copysign(0, y) and e^(+inf + iy) = inf + i NaN
// (StableHLO's exponential gives NaN + i NaN for both).
inline Value cexp(Builder& b, const Value& w) {
  Value a = b.real(w), y = b.imag(w);
  Value mag = b.unary("exponential", a);
  Value zero = ew::zeros_like(b, a);
  Value y_zero = b.compare(y, zero, "EQ");
  Value re = b.select(y_zero, mag, b.multiply(mag, b.unary("cosine", y)));
  Value im = b.select(y_zero, y, b.multiply(mag, b.unary("sine", y)));
  Value inf = ew::full_like(b, a, std::numeric_limits<double>::infinity());
  Value not_finite_y = ew::logical_not(b, b.is_finite(y));
  Value to_zero = ew::logical_and(b, b.compare(a, b.negate(inf), "EQ"), not_finite_y);
  Value to_inf = ew::logical_and(b, b.compare(a, inf, "EQ"), not_finite_y);
  re = b.select(to_zero, zero, b.select(to_inf, inf, re));
  im = b.select(to_zero, copysign(b, zero, y),
                b.select(to_inf, ew::full_like(b, a, std::numeric_limits<double>::quiet_NaN()), im));
  return b.complex(re, im);
}

// x * y as C's complex multiply (C99 Annex G), which the CPU's std::pow
// runs: a product whose parts both come out NaN from an infinite factor is
// recomputed with the infinities as +-1 (and NaN parts as 0) and scaled by
// inf, so (inf + inf i) * (0.69 + 0i) is inf + inf i, not NaN + NaN i.
inline Value multiply_c99(Builder& b, const Value& x, const Value& y) {
  Value p = b.real(x), q = b.imag(x), r = b.real(y), s = b.imag(y);
  auto product = [&](const Value& p, const Value& q, const Value& r, const Value& s) {
    return std::pair{b.subtract(b.multiply(p, r), b.multiply(q, s)), b.add(b.multiply(p, s), b.multiply(q, r))};
  };
  auto [re, im] = product(p, q, r, s);
  Value zero = ew::zeros_like(b, p), one = ew::full_like(b, p, 1);
  Value inf = ew::full_like(b, p, std::numeric_limits<double>::infinity());
  auto is_inf = [&](const Value& v) { return complex_math::is_inf(b, v); };
  auto unit_if_inf = [&](const Value& v) { return copysign(b, b.select(is_inf(v), one, zero), v); };
  auto zero_if_nan = [&](const Value& v) { return b.select(ew::is_nan(b, v), copysign(b, zero, v), v); };
  Value x_inf = ew::logical_or(b, is_inf(p), is_inf(q)), y_inf = ew::logical_or(b, is_inf(r), is_inf(s));
  Value pr = b.multiply(p, r), qs = b.multiply(q, s), ps = b.multiply(p, s), qr = b.multiply(q, r);
  Value term_inf = ew::logical_or(b, ew::logical_or(b, is_inf(pr), is_inf(qs)), ew::logical_or(b, is_inf(ps), is_inf(qr)));
  // The factors as recomputed: an infinite factor's parts become +-1 / +-0,
  // the other factor's NaN parts +-0 (all four when only a term overflowed).
  Value p2 = b.select(x_inf, unit_if_inf(p), b.select(ew::logical_or(b, y_inf, term_inf), zero_if_nan(p), p));
  Value q2 = b.select(x_inf, unit_if_inf(q), b.select(ew::logical_or(b, y_inf, term_inf), zero_if_nan(q), q));
  Value r2 = b.select(y_inf, unit_if_inf(r), b.select(ew::logical_or(b, x_inf, term_inf), zero_if_nan(r), r));
  Value s2 = b.select(y_inf, unit_if_inf(s), b.select(ew::logical_or(b, x_inf, term_inf), zero_if_nan(s), s));
  auto [re2, im2] = product(p2, q2, r2, s2);
  Value recompute = ew::logical_and(b, ew::logical_and(b, ew::is_nan(b, re), ew::is_nan(b, im)),
                                    ew::logical_or(b, ew::logical_or(b, x_inf, y_inf), term_inf));
  return b.complex(b.select(recompute, b.multiply(inf, re2), re), b.select(recompute, b.multiply(inf, im2), im));
}

// sqrt with C99's signs: Re >= 0 and Im carrying the sign of Im z, so that a
// -0 imaginary part takes the lower side of the cut (XLA's ignores it), and
// C99's infinities and NaNs: sqrt(x + i inf) = inf + i inf for every x,
// sqrt(+inf + iy) = inf + i0 (inf + i NaN for a NaN y), sqrt(-inf + iy) =
// 0 + i inf (NaN + i inf), NaN + i NaN otherwise (XLA's gave 1.1 + i NaN for
// sqrt(1 + i NaN), and NaN + i NaN for sqrt(NaN + i inf)).
inline Value csqrt(Builder& b, const Value& z) {
  Value r = b.unary("sqrt", z);
  Value x = b.real(z), y = b.imag(z);
  Value im = b.unary("abs", b.imag(r));
  Value re = b.unary("abs", b.real(r));
  im = b.select(sign_bit(b, y), b.negate(im), im);
  Value inf = ew::full_like(b, x, std::numeric_limits<double>::infinity());
  Value nan = ew::full_like(b, x, std::numeric_limits<double>::quiet_NaN()), zero = ew::zeros_like(b, x);
  Value signed_zero = copysign(b, zero, y), signed_inf = copysign(b, inf, y);
  Value y_nan = ew::is_nan(b, y);
  Value special = not_finite(b, z);
  Value sre = nan, sim = nan;
  Value plus_inf = b.compare(x, inf, "EQ"), minus_inf = b.compare(x, b.negate(inf), "EQ");
  sre = b.select(plus_inf, inf, sre);
  sim = b.select(plus_inf, b.select(y_nan, nan, signed_zero), sim);
  sre = b.select(minus_inf, b.select(y_nan, nan, zero), sre);
  sim = b.select(minus_inf, b.select(y_nan, inf, signed_inf), sim);
  Value y_inf = is_inf(b, y);
  sre = b.select(y_inf, inf, sre);
  sim = b.select(y_inf, y, sim);
  return b.complex(b.select(special, sre, re), b.select(special, sim, im));
}

// log with C99's infinities and NaNs: where a part is not finite,
// log|z| + i atan2(Im z, Re z) with |z| C99's hypot (inf if a part is
// infinite, else NaN), which is C99's table (XLA's log gave
// log(1 + i NaN) = 0.35 + i NaN and log(NaN + i inf) = NaN + i NaN).
inline Value clog(Builder& b, const Value& z) {
  Value x = b.real(z), y = b.imag(z);
  Value special = b.complex(b.unary("log", magnitude(b, z)), b.binary("atan2", y, x));
  return b.select(not_finite(b, z), special, b.unary("log", z));
}

// x ** y as glibc's cpow: cexp(y * clog(x)), the product C99's (infinities recovered).
inline Value cpow(Builder& b, const Value& x, const Value& y) { return cexp(b, multiply_c99(b, y, clog(b, x))); }

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
