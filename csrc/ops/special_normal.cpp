// The normal distribution's special functions: ndtri (inverse CDF, Cephes'
// rational fits, as the CPU computes it), erfcx (scaled erfc) and log_ndtr
// (log CDF, SciPy's split at x = -1 as on the CPU). Ints and bool promote to
// the float result dtype; the CPU has no half kernels for these.
#include <cmath>

#include "ops/elementwise_common.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// c[0] x^(n-1) + ... + c[n-1] by Horner's rule, constants rounded to x's dtype.
template <size_t N>
Value polevl(Builder& b, const Value& x, const double (&c)[N]) {
  Value r = full_like(b, x, c[0]);
  for (size_t i = 1; i < N; ++i) r = b.add(b.multiply(r, x), full_like(b, x, c[i]));
  return r;
}

// Cephes ndtri: a rational fit in (y - 1/2)^2 for |y - 1/2| <= 1/2 - e^-2,
// else x0 - x1 with z = sqrt(-2 log y) and a fit in 1/z for z < 8 and above.
constexpr double kP0[] = {-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
                          1.39312609387279679503E1, -1.23916583867381258016E0};
constexpr double kQ0[] = {1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
                          -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
                          1.59056225126211695515E1, -1.18331621121330003142E0};
constexpr double kP1[] = {4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
                          4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
                          -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4};
constexpr double kQ1[] = {1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
                          1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
                          -3.80806407691578277194E-2, -9.33259480895457427372E-4};
constexpr double kP2[] = {3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
                          1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
                          3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9};
constexpr double kQ2[] = {1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
                          2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
                          2.89247864745380683936E-6, 6.79019408009981274425E-9};

Value ndtri(Builder& b, const Value& y0) {
  auto k = [&](double v) { return full_like(b, y0, v); };
  constexpr double kExpM2 = 0.13533528323661269189;  // e^-2
  Value upper = b.compare(y0, b.subtract(k(1), k(kExpM2)), "GT");
  Value y = b.select(upper, b.subtract(k(1), y0), y0);
  // Central fit.
  Value yc = b.subtract(y, k(0.5));
  Value y2 = b.multiply(yc, yc);
  Value central = b.add(yc, b.multiply(yc, b.divide(b.multiply(y2, polevl(b, y2, kP0)), polevl(b, y2, kQ0))));
  central = b.multiply(central, k(2.50662827463100050242E0));  // sqrt(2 pi)
  // Tails (y = 0 gives inf/NaN here, replaced below).
  Value x = b.unary("sqrt", b.multiply(k(-2), b.unary("log", y)));
  Value x0 = b.subtract(x, b.divide(b.unary("log", x), x));
  Value z = b.divide(k(1), x);
  Value x1 = b.select(b.compare(x, k(8), "LT"), b.divide(b.multiply(z, polevl(b, z, kP1)), polevl(b, z, kQ1)),
                      b.divide(b.multiply(z, polevl(b, z, kP2)), polevl(b, z, kQ2)));
  Value tail = b.subtract(x0, x1);
  tail = b.select(upper, tail, b.negate(tail));
  Value r = b.select(b.compare(y, k(kExpM2), "GT"), central, tail);
  r = b.select(logical_or(b, b.compare(y0, k(0), "LT"), b.compare(y0, k(1), "GT")), k(NAN), r);
  r = b.select(b.compare(y0, k(1), "EQ"), k(INFINITY), r);
  r = b.select(b.compare(y0, k(0), "EQ"), k(-INFINITY), r);
  return b.select(is_nan(b, y0), y0, r);
}

// erfcx(x) = exp(x^2) erfc(x) in f64 (x^2 of an f32 is exact there, and
// erfc stays normal up to x ~ 26, where f32's would have underflowed at ~10);
// beyond 25 the continued fraction's 5 terms the CPU uses, then 1/(sqrt(pi) x).
// TPUs emulate f64; this is the accuracy the CPU's Chebyshev fits give.
Value erfcx_wide(Builder& b, const Value& x0) {
  DType wide = widest_internal_type(x0.type.dtype);
  Value x = b.convert(x0, wide);
  auto k = [&](double v) { return full_like(b, x, v); };
  Value xs = b.minimum(x, k(25));
  // Below 0 the CPU computes 2 exp(x^2) - erfcx(-x) with x^2 rounded to x's
  // dtype, which moves the result by up to 2 x^2 ulps; round it the same way.
  Value sq = b.convert(b.multiply(x0, x0), wide);
  sq = b.select(b.compare(x, k(0), "LT"), sq, b.multiply(xs, xs));
  Value direct = b.multiply(b.unary("exponential", sq), b.unary("chlo.erfc", xs));
  Value xl = b.maximum(x, k(25));
  Value x2 = b.multiply(xl, xl);
  constexpr double ispi = 0.56418958354775628694807945156;  // 1 / sqrt(pi)
  Value cf = b.divide(b.multiply(k(ispi), b.add(b.multiply(x2, b.add(x2, k(4.5))), k(2))),
                      b.multiply(xl, b.add(b.multiply(x2, b.add(x2, k(5))), k(3.75))));
  cf = b.select(b.compare(xl, k(5e7), "GT"), b.divide(k(ispi), xl), cf);
  Value r = b.select(b.compare(x, k(25), "GT"), cf, direct);
  r = b.select(b.compare(x, k(-26.7), "LT"), k(INFINITY), r);
  return b.select(is_nan(b, x), x, r);
}

// erfcx in f32 (no f64 a TPU lacks): for x >= 1.5 the continued fraction
// erfcx(x) = pi^-1/2 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))),
// 20 levels (within 2 ulps of the double value from 1.5 on); below that
// exp(x^2) erfc(x). Below 0 the CPU's 2 exp(x^2) - erfcx(-x), x^2 rounded
// to float as there (inf once exp overflows, near x = -9.38).
Value erfcx_narrow(Builder& b, const Value& x) {
  auto k = [&](double v) { return full_like(b, x, v); };
  Value a = b.unary("abs", x);
  Value as = b.minimum(a, k(1.5)), al = b.maximum(a, k(1.5));
  Value direct = b.multiply(b.unary("exponential", b.multiply(as, as)), b.unary("chlo.erfc", as));
  Value t = k(0);
  for (int n = 20; n >= 1; --n) t = b.divide(k(n / 2.0), b.add(al, t));
  Value cf = b.divide(k(0.56418958354775628694807945156), b.add(al, t));
  Value pos = b.select(b.compare(a, k(1.5), "LT"), direct, cf);
  Value neg = b.subtract(b.multiply(k(2), b.unary("exponential", b.multiply(x, x))), pos);
  return b.select(b.compare(x, k(0), "LT"), neg, pos);
}

// The float64 evaluation, or the f32 one.
Value erfcx_any(Builder& b, const Value& x) {
  return x.type.dtype == DType::F64 ? erfcx_wide(b, x) : erfcx_narrow(b, b.convert(x, DType::F32));
}

// The CPU has float32/float64 kernels only.
void reject_half(const OpCall& c, const char* kernel) {
  DType t = c.outputs[0].dtype;
  if (t == DType::BF16 || t == DType::F16)
    throw NotImplemented(std::string("\"") + kernel + "\" not implemented for '" + hlo::dtype_name(t) + "'");
}

TORCH_TPU_LOWERING("special_ndtri", [](Builder& b, const OpCall& c, const Values& v) {
  reject_half(c, "ndtri_cpu");
  return unary_float(b, c, v, [](Builder& b, const Value& x) { return ndtri(b, x); });
});

TORCH_TPU_LOWERING("special_erfcx", [](Builder& b, const OpCall& c, const Values& v) {
  reject_half(c, "erfcx_cpu");
  return unary_float(b, c, v, [](Builder& b, const Value& x) { return b.convert(erfcx_any(b, x), x.type.dtype); });
});

// log_ndtr(x), t = x / sqrt(2): log(erfcx(-t) / 2) - t^2 below -1 (no
// underflow), log1p(-erfc(t) / 2) above. t and t^2 are rounded to x's dtype
// as on the CPU: the gradient exp(-(result + x^2/2)) amplifies any difference
// in t^2 by x^2. The log terms are computed in f64 with erfcx for float64,
// in f32 otherwise (TPU-portable).
TORCH_TPU_LOWERING("special_log_ndtr", [](Builder& b, const OpCall& c, const Values& v) {
  reject_half(c, "log_ndtr_cpu");
  return unary_float(b, c, v, [](Builder& b, const Value& x) {
    DType dt = x.type.dtype;
    Value t = b.multiply(x, full_like(b, x, M_SQRT1_2));
    Value tw = b.convert(t, widest_internal_type(dt));
    auto k = [&](double v) { return full_like(b, tw, v); };
    Value log_term = b.unary("log", b.multiply(erfcx_any(b, b.negate(tw)), k(0.5)));
    Value low = b.subtract(b.convert(log_term, dt), b.multiply(t, t));
    Value high = b.unary("log_plus_one", b.negate(b.multiply(b.unary("chlo.erfc", tw), k(0.5))));
    Value r = b.select(b.compare(x, full_like(b, x, -1), "LT"), low, b.convert(high, dt));
    return b.select(is_nan(b, x), x, r);
  });
});

}  // namespace
}  // namespace torch_tpu::ops
