// Complex unary math (exp/log/trig/hyperbolic and their inverses, sqrt,
// sigmoid, reciprocal, sgn, angle, silu, sinc) and complex ldexp. StableHLO's
// complex log/log1p/sqrt/tanh are used where both parts are finite, with
// C99's values (Annex G, which the CPU's std::complex functions return) where
// one is infinite or NaN; its exponential with C99's infinities (cexp);
// expm1 is the CPU's formula and quotients are the CPU's
// (complex_math::divide); sin/cos are built from real parts, and the rest
// are the usual identities in those (sinh z = -i sin(iz), asin z =
// -i asinh(iz), ...).
#include <cmath>
#include <limits>

#include "ops/complex/arcsine.h"
#include "ops/complex/complex_math.h"
#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;
using namespace complex_math;

Value cx(Builder& b, double re, double im, const Value& like) {
  DType part = hlo::complex_component(like.type.dtype);
  return b.complex(b.splat_float(like.type.with_dtype(part), re), b.splat_float(like.type.with_dtype(part), im));
}
// z * k for a real k, part by part: (-inf + 0i) * k stays -inf + 0i (a complex
// product would give inf * 0 = NaN in the imaginary part).
Value scale(Builder& b, const Value& z, double k) {
  Value kk = b.splat_float(z.type.with_dtype(hlo::complex_component(z.type.dtype)), k);
  return b.complex(b.multiply(b.real(z), kk), b.multiply(b.imag(z), kk));
}
Value times_i(Builder& b, const Value& z) { return b.complex(b.negate(b.imag(z)), b.real(z)); }
Value times_minus_i(Builder& b, const Value& z) { return b.complex(b.imag(z), b.negate(b.real(z))); }
Value op(Builder& b, const char* name, const Value& z) { return b.unary(name, z); }

// e^z - 1 as the CPU computes it, (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y:
// accurate near 0, and its infinities are the CPU's (expm1(inf + 0i) =
// inf + i NaN, since inf * sin 0 is NaN; StableHLO's gives inf + 0i).
Value cexpm1(Builder& b, const Value& z) {
  Value x = b.real(z), y = b.imag(z);
  Value s = b.unary("sine", b.multiply(y, b.splat_float(y.type, 0.5)));
  Value re = b.subtract(b.multiply(b.unary("exponential_minus_one", x), b.unary("cosine", y)),
                        b.multiply(b.splat_float(s.type, 2), b.multiply(s, s)));
  return b.complex(re, b.multiply(b.unary("exponential", x), b.unary("sine", y)));
}

// Real sinh/cosh that stay accurate near 0 (XLA's complex sine/cosine take
// sinh y as (e^y - e^-y) / 2, which loses all digits of a small y) and reach
// infinity only where they overflow (exp(|y|/2)^2 / 2 past |y| = 20).
Value half_exp(Builder& b, const Value& a) {  // exp(a) / 2 without overflowing early
  Value e = b.unary("exponential", b.multiply(a, b.splat_float(a.type, 0.5)));
  return b.multiply(b.multiply(e, b.splat_float(a.type, 0.5)), e);
}
Value sinh_real(Builder& b, const Value& x) {
  Value a = b.unary("abs", x);
  Value e = b.unary("exponential_minus_one", a);  // sinh(a) = (e + e / (e + 1)) / 2
  Value half = b.splat_float(a.type, 0.5);
  Value r = b.multiply(b.add(e, b.divide(e, b.add(e, b.splat_float(a.type, 1)))), half);
  r = b.select(b.compare(a, b.splat_float(a.type, 20), "GT"), half_exp(b, a), r);
  return copysign(b, r, x);  // sinh(-0) = -0
}
Value cosh_real(Builder& b, const Value& x) {
  Value a = b.unary("abs", x);
  Value e = b.unary("exponential", a);
  Value half = b.splat_float(e.type, 0.5);
  Value r = b.add(b.multiply(e, half), b.divide(half, e));
  return b.select(b.compare(a, b.splat_float(a.type, 20), "GT"), half_exp(b, a), r);
}
// t * h for a trig factor t and a hyperbolic h that may be infinite: an exact
// zero t gives a signed zero (C99's sin(0 + i inf) = 0 + i inf), not 0 * inf = NaN.
Value trig_times(Builder& b, const Value& t, const Value& h) {
  Value sign_h = b.select(logical_and(b, sign_bit(b, h), logical_not(b, is_nan(b, h))), b.splat_float(h.type, -1), b.splat_float(h.type, 1));
  return b.select(b.compare(t, b.splat_float(t.type, 0), "EQ"), b.multiply(t, sign_h), b.multiply(t, h));
}
// C99's values where Re z is infinite or NaN and Im z is 0 or infinite
// (the products above give NaN + i NaN there): sin = NaN + i Im z for a zero
// Im z, NaN + i inf for an infinite one; cos = NaN + i0, inf + i NaN.
Value x_not_finite_at(Builder& b, const Value& z, const Value& y_class) {
  return logical_and(b, logical_not(b, b.is_finite(b.real(z))), y_class);
}
Value sin(Builder& b, const Value& z) {  // sin x cosh y + i cos x sinh y
  Value x = b.real(z), y = b.imag(z);
  Value r = b.complex(trig_times(b, b.unary("sine", x), cosh_real(b, y)), trig_times(b, b.unary("cosine", x), sinh_real(b, y)));
  Value nan = b.splat_float(x.type, std::numeric_limits<double>::quiet_NaN());
  Value inf = b.splat_float(x.type, std::numeric_limits<double>::infinity());
  r = b.select(x_not_finite_at(b, z, b.compare(y, zeros_like(b, y), "EQ")), b.complex(nan, y), r);
  return b.select(x_not_finite_at(b, z, is_inf(b, y)), b.complex(nan, inf), r);
}
Value cos(Builder& b, const Value& z) {  // cos x cosh y - i sin x sinh y
  Value x = b.real(z), y = b.imag(z);
  Value r = b.complex(trig_times(b, b.unary("cosine", x), cosh_real(b, y)),
                      b.negate(trig_times(b, b.unary("sine", x), sinh_real(b, y))));
  Value nan = b.splat_float(x.type, std::numeric_limits<double>::quiet_NaN());
  Value inf = b.splat_float(x.type, std::numeric_limits<double>::infinity());
  r = b.select(x_not_finite_at(b, z, b.compare(y, zeros_like(b, y), "EQ")), b.complex(nan, zeros_like(b, x)), r);
  r = b.select(logical_and(b, b.compare(x, zeros_like(b, x), "EQ"), is_nan(b, y)), b.complex(nan, x), r);  // glibc's sign
  return b.select(x_not_finite_at(b, z, is_inf(b, y)), b.complex(inf, nan), r);
}
// tanh with C99's signed zeros and special values, where XLA's loses them:
// tanh(x +- 0i) = tanh x +- 0i, tanh(+-0 + iy) = +-0 + i tan y (NaN for a
// non-finite y; XLA's gave NaN + i NaN), tanh(+-inf + iy) = +-1 + i copysign(0, y)
// for a non-finite y.
Value ctanh(Builder& b, const Value& z) {
  Value x = b.real(z), y = b.imag(z), zero = zeros_like(b, x);
  Value t = op(b, "tanh", z);
  Value re = b.real(t), im = b.imag(t);
  Value y_finite = b.is_finite(y);
  im = b.select(b.compare(y, zero, "EQ"), y, im);
  Value x_zero = b.compare(x, zero, "EQ");
  re = b.select(x_zero, x, re);
  im = b.select(logical_and(b, x_zero, logical_not(b, y_finite)), b.splat_float(x.type, std::numeric_limits<double>::quiet_NaN()), im);
  Value far = logical_and(b, is_inf(b, x), logical_not(b, y_finite));
  Value one = b.splat_float(x.type, 1);
  re = b.select(far, copysign(b, one, x), re);
  im = b.select(far, copysign(b, zero, y), im);
  return b.complex(re, im);
}

// The inverse functions are odd and commute with conjugation, so they are
// computed for |Re z| + i|Im z| (where the formulas' branches are the
// principal ones, signed zeros included) and the signs copied back: the C99
// rules the CPU's std::complex functions follow on the branch cuts.
Value first_quadrant(Builder& b, const Value& z) {
  return b.complex(b.unary("abs", b.real(z)), b.unary("abs", b.imag(z)));
}
Value copy_signs(Builder& b, const Value& r, const Value& z) {
  return b.complex(copysign(b, b.real(r), b.real(z)), copysign(b, b.imag(r), b.imag(z)));
}
// |w| beyond which the formulas below would square past the range: there
// asinh w = log(2w) and atanh w = 1/w + i pi/2 to the dtype's precision (and
// the infinities get C99's values: asinh(inf + iy) = inf + i0, atanh = 0 + i pi/2).
Value big(Builder& b, const Value& w) {
  Value m = magnitude(b, w);
  return b.compare(m, b.splat_float(m.type, hlo::complex_component(w.type.dtype) == DType::F64 ? 1e150 : 1e18), "GT");
}
// w + log 2 on the real part only (adding 0i would turn a -0 imaginary part into +0).
Value plus_log2(Builder& b, const Value& w) {
  return b.complex(b.add(b.real(w), b.splat_float(b.real(w).type, std::log(2.0))), b.imag(w));
}
Value is_inf_part(Builder& b, const Value& w) { return logical_or(b, is_inf(b, b.real(w)), is_inf(b, b.imag(w))); }
// Where arcsine_first_quadrant serves: z finite and not big.
Value moderate(Builder& b, const Value& z) { return logical_and(b, logical_not(b, not_finite(b, z)), logical_not(b, big(b, z))); }
// asinh w = -i asin(iw): for w = u + iv in the first quadrant, im + i asin_re
// of arcsine_first_quadrant(v, u).
Value asinh(Builder& b, const Value& z) {
  Value w = first_quadrant(b, z);
  Value x = b.real(w), y = b.imag(w), nan = b.splat_float(x.type, std::numeric_limits<double>::quiet_NaN());
  Arcsine a = arcsine_first_quadrant(b, y, x);
  Value far = plus_log2(b, clog(b, w));
  Value r = b.select(moderate(b, w), b.complex(a.im, a.asin_re), b.select(big(b, w), far, b.complex(nan, nan)));
  // C99: asinh(NaN + i0) = NaN + i0, asinh(NaN + i inf) = inf + i NaN (the formulas: NaN + i NaN).
  r = b.select(logical_and(b, is_nan(b, x), b.compare(y, zeros_like(b, y), "EQ")), b.complex(nan, y), r);
  r = b.select(logical_and(b, is_nan(b, x), is_inf(b, y)), b.complex(y, nan), r);
  return copy_signs(b, r, z);
}
// atanh w = (log1p(w) - log1p(-w)) / 2, for w in the first quadrant, with
// glibc's real part: log|1 + w| - log|1 - w| as log1p(4x / ((1 - x)^2 + y^2)) / 4,
// and (ln 2 - log y) / 2 at x = 1 for a y whose square would vanish there
// (the difference of XLA's log1p gave inf for atanh(1 + 1e-30i), the CPU 34.9).
Value atanh(Builder& b, const Value& z) {
  Value w = first_quadrant(b, z);
  Value x = b.real(w), y = b.imag(w);
  Value near = scale(b, b.subtract(op(b, "log_plus_one", w), op(b, "log_plus_one", b.negate(w))), 0.5);
  double eps = hlo::complex_component(z.type.dtype) == DType::F64 ? std::numeric_limits<double>::epsilon()
                                                                  : std::numeric_limits<float>::epsilon();
  Value one_minus_x = b.subtract(b.splat_float(x.type, 1), x);
  Value den = b.add(b.multiply(one_minus_x, one_minus_x), b.multiply(y, y));
  Value near_re = b.multiply(b.unary("log_plus_one", b.divide(b.multiply(b.splat_float(x.type, 4), x), den)), b.splat_float(x.type, 0.25));
  Value at_one = logical_and(b, b.compare(x, b.splat_float(x.type, 1), "EQ"), b.compare(y, b.splat_float(y.type, eps * eps), "LT"));
  Value at_one_re = b.multiply(b.subtract(b.splat_float(y.type, std::log(2.0)), b.unary("log", y)), b.splat_float(y.type, 0.5));
  near = b.complex(b.select(at_one, at_one_re, near_re), b.imag(near));
  Value m = magnitude(b, w);
  Value inv_m = b.divide(b.splat_float(m.type, 1), m);  // 1/w = conj(w)/|w| * 1/|w|, no overflow
  Value re = b.multiply(b.multiply(x, inv_m), inv_m), im = b.multiply(b.multiply(y, inv_m), inv_m);
  Value zero = b.splat_float(m.type, 0), nan = b.splat_float(m.type, std::numeric_limits<double>::quiet_NaN());
  re = b.select(is_inf_part(b, w), zero, re);
  im = b.select(is_inf_part(b, w), zero, im);
  Value far = b.complex(re, b.subtract(b.splat_float(m.type, M_PI / 2), im));
  Value r = b.select(big(b, w), far, near);
  // C99: a NaN part gives NaN + i NaN (the formulas lost the real NaN of
  // atanh(3e38 + i NaN)), but atanh(0 + i NaN) = atanh(inf + i NaN) = 0 + i NaN
  // (the formulas: NaN + i NaN, 0 + i pi/2) and atanh(NaN + i inf) = 0 + i pi/2.
  Value any_nan = logical_and(b, logical_or(b, is_nan(b, x), is_nan(b, y)), logical_not(b, is_inf(b, y)));
  r = b.select(any_nan, b.complex(nan, nan), r);
  Value at = logical_and(b, is_nan(b, y), logical_or(b, b.compare(x, zero, "EQ"), is_inf(b, x)));
  r = b.select(at, b.complex(zero, y), r);
  return copy_signs(b, r, z);
}
// acos z from arcsine_first_quadrant(|x|, |y|) (pi/2 - asin z cancels near
// z = 1); pi/2 - asin z where z is big or not finite. The imaginary part is
// negated for complex64 (C99's acos(x + i0) = acos x - i0, which 0 - (+0)
// would lose) and subtracted from 0 for complex128, whose CPU kernel
// (pi/2 - asin z) gives +0 there.
struct AcosParts {
  Value re, minus_im;  // acos z = re - i minus_im, before the zero's sign is settled
};
AcosParts acos_parts(Builder& b, const Value& z) {
  Value x = b.real(z), y = b.imag(z);
  Arcsine a = arcsine_first_quadrant(b, b.unary("abs", x), b.unary("abs", y));
  Value near_re = b.select(sign_bit(b, x), b.subtract(b.splat_float(x.type, M_PI), a.acos_re), a.acos_re);
  Value near_im = copysign(b, a.im, y);
  Value s = times_minus_i(b, asinh(b, times_i(b, z)));
  Value use = moderate(b, z);
  return {b.select(use, near_re, b.subtract(b.splat_float(x.type, M_PI / 2), b.real(s))), b.select(use, near_im, b.imag(s))};
}
Value acos(Builder& b, const Value& z) {
  AcosParts p = acos_parts(b, z);
  Value im = z.type.dtype == DType::C128 ? b.subtract(zeros_like(b, p.minus_im), p.minus_im) : b.negate(p.minus_im);
  return b.complex(p.re, im);
}

// acosh z from acos z where z is moderate; log(z + sqrt(z + 1) sqrt(z - 1))
// (Kahan's form) at NaNs, and log(2z) for a huge |z| (infinities included),
// which keeps arg(z) on the branch cuts.
Value acosh(Builder& b, const Value& z) {
  // z + 1 and z - 1 on the real part only: adding 0i would turn a -0 imaginary part into +0 (the other side of the cut).
  auto shift = [&](double k) { return b.complex(b.add(b.real(z), b.splat_float(b.real(z).type, k)), b.imag(z)); };
  Value kahan = clog(b, b.add(z, b.multiply(csqrt(b, shift(1)), csqrt(b, shift(-1)))));
  Value r = b.select(big(b, z), plus_log2(b, clog(b, z)), kahan);
  // acosh z = |Im acos z| + i copysign(Re acos z, Im z): Kahan's form cancels near z = 1
  AcosParts p = acos_parts(b, z);
  Value im_acos = b.unary("abs", p.minus_im);
  Value re_acos = copysign(b, p.re, b.imag(z));
  r = b.select(moderate(b, z), b.complex(im_acos, re_acos), r);
  // C99: acosh(+-0 + i NaN) = NaN + i pi/2 (the formula: NaN + i NaN).
  Value x = b.real(z), y = b.imag(z);
  Value at = logical_and(b, b.compare(x, zeros_like(b, x), "EQ"), is_nan(b, y));
  return b.select(at, cx(b, std::numeric_limits<double>::quiet_NaN(), M_PI / 2, z), r);
}
using Fn = Value (*)(Builder&, const Value&);

// out = f(z), z the input cast to the complex result dtype.
Values complex_unary(Builder& b, const OpCall& c, const Values& v, Fn f) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_complex(out.dtype)) throw std::invalid_argument(c.op + ": unsupported result dtype " + out.str());
  return Values{f(b, to_type(b, operand(c, v, 0), out))};
}

#define TORCH_TPU_COMPLEX_UNARY(name, ...)                                                              \
  TORCH_TPU_COMPLEX_LOWERING(name, [](Builder& b, const OpCall& c, const Values& v) {                   \
    return complex_unary(b, c, v, [](Builder& b, const Value& z) -> Value { return __VA_ARGS__; });     \
  })

TORCH_TPU_COMPLEX_UNARY("exp", cexp(b, z));
TORCH_TPU_COMPLEX_UNARY("exp2", cexp(b, scale(b, z, std::log(2.0))));
TORCH_TPU_COMPLEX_UNARY("expm1", cexpm1(b, z));
TORCH_TPU_COMPLEX_UNARY("log", clog(b, z));
TORCH_TPU_COMPLEX_UNARY("log2", scale(b, clog(b, z), 1 / std::log(2.0)));
TORCH_TPU_COMPLEX_UNARY("log10", scale(b, clog(b, z), 1 / std::log(10.0)));
// log1p as the CPU computes it (numpy's): u = 1 + z, and log u * z / (u - 1)
// where u - 1 is not z (XLA's lost the NaN of log1p(3e38 + i NaN) and the -0
// of log1p(-0 - 0i)).
TORCH_TPU_COMPLEX_UNARY("log1p", [](Builder& b, const Value& z) {
  Value x = b.real(z), y = b.imag(z), one = b.splat_float(x.type, 1);
  Value ux = b.add(x, one);
  // XLA folds (x + 1) - 1 into x, which would take every u - 1 for z
  Value u = b.complex(ux, y), d = b.complex(b.subtract(b.opaque(ux), one), y);
  Value log_u = clog(b, u);
  Value r = b.select(logical_and(b, b.compare(b.real(d), x, "EQ"), b.compare(y, y, "EQ")), log_u, b.multiply(log_u, divide(b, z, d)));
  return b.select(logical_and(b, b.compare(ux, one, "EQ"), b.compare(y, zeros_like(b, y), "EQ")), z, r);
}(b, z));
TORCH_TPU_COMPLEX_UNARY("sqrt", csqrt(b, z));
TORCH_TPU_COMPLEX_UNARY("rsqrt", divide(b, one(b, z), csqrt(b, z)));
TORCH_TPU_COMPLEX_UNARY("reciprocal", divide(b, one(b, z), z));
TORCH_TPU_COMPLEX_UNARY("sin", sin(b, z));
TORCH_TPU_COMPLEX_UNARY("cos", cos(b, z));
TORCH_TPU_COMPLEX_UNARY("tan", times_minus_i(b, ctanh(b, times_i(b, z))));
TORCH_TPU_COMPLEX_UNARY("tanh", ctanh(b, z));
TORCH_TPU_COMPLEX_UNARY("sinh", times_minus_i(b, sin(b, times_i(b, z))));
// cosh z = cos iz, but C99's cosh(NaN +- 0i) = NaN +- 0i (glibc's sign; cos iz gives the other)
TORCH_TPU_COMPLEX_UNARY("cosh", [](Builder& b, const Value& z) {
  Value x = b.real(z), y = b.imag(z);
  Value at = logical_and(b, is_nan(b, x), b.compare(y, zeros_like(b, y), "EQ"));
  return b.select(at, b.complex(x, y), cos(b, times_i(b, z)));
}(b, z));
TORCH_TPU_COMPLEX_UNARY("sigmoid", divide(b, one(b, z), b.add(cx(b, 1, 0, z), cexp(b, b.negate(z)))));
// silu: z / (1 + exp(-z)), the CPU's complex formula.
TORCH_TPU_COMPLEX_UNARY("silu", divide(b, z, b.add(cx(b, 1, 0, z), cexp(b, b.negate(z)))));
// sinc: sin(pi z) / (pi z), 1 at 0.
TORCH_TPU_COMPLEX_UNARY("sinc", [](Builder& b, const Value& z) {
  Value pz = scale(b, z, M_PI);
  return b.select(b.compare(z, cx(b, 0, 0, z), "EQ"), cx(b, 1, 0, z), b.divide(sin(b, pz), pz));
}(b, z));
TORCH_TPU_COMPLEX_UNARY("asinh", asinh(b, z));
TORCH_TPU_COMPLEX_UNARY("acosh", acosh(b, z));
TORCH_TPU_COMPLEX_UNARY("atanh", atanh(b, z));
TORCH_TPU_COMPLEX_UNARY("asin", times_minus_i(b, asinh(b, times_i(b, z))));
TORCH_TPU_COMPLEX_UNARY("acos", acos(b, z));
TORCH_TPU_COMPLEX_UNARY("atan", times_minus_i(b, atanh(b, times_i(b, z))));
// sgn: z / (|z| + 0i), a complex division, 0 at 0: the CPU's per-element
// kernel (its vectorized one divides part by part and differs at infinities,
// sgn(0 - inf i) = 0 + NaN i there, NaN + NaN i here and per element).
TORCH_TPU_COMPLEX_UNARY("sgn", [](Builder& b, const Value& z) {
  Value a = magnitude(b, z);
  Value zero = b.splat_float(a.type, 0);
  Value r = divide(b, z, b.complex(a, opaque_zero(b, a)));
  return b.select(b.compare(a, zero, "EQ"), cx(b, 0, 0, z), r);
}(b, z));
#undef TORCH_TPU_COMPLEX_UNARY

// angle: atan2(imag, real), a real result.
TORCH_TPU_COMPLEX_LOWERING("angle", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& z = operand(c, v, 0);
  return Values{b.convert(b.binary("atan2", b.imag(z), b.real(z)), c.outputs[0].dtype)};
});

// ldexp(x, e) = x * 2^e with x or e complex: the power in e's dtype (the
// default float dtype for an integral e), as the CPU's x * pow(2.0, e).
TORCH_TPU_COMPLEX_LOWERING("ldexp.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = b.broadcast_to(to_type(b, operand(c, v, 0), TensorType(out.dtype, operand(c, v, 0).type.dims)), out.dims);
  const Value& e = operand(c, v, 1);
  DType pt = hlo::is_float(e.type.dtype) || hlo::is_complex(e.type.dtype) ? e.type.dtype : c.default_float;
  Value ef = b.broadcast_to(b.convert(e, compute_type(pt)), out.dims);
  Value p = hlo::is_complex(ef.type.dtype) ? cpow(b, cx(b, 2, 0, ef), ef)  // XLA's power: 2^(-inf + 0.5i) = NaN, not 0
                                           : b.binary("power", b.splat_float(ef.type, 2), ef);
  return Values{b.multiply(x, b.convert(b.convert(p, pt), out.dtype))};
});

}  // namespace
}  // namespace torch_tpu::ops
