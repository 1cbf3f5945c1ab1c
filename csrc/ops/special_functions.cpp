// torch.special functions from CHLO or short identities: polygamma (digamma,
// the CPU's trigamma, then n! zeta(n + 1, x)), Hurwitz zeta (in f64 like the
// CPU's accumulator), Bessel i0/i0e (series in f64; half i0e as the CPU's
// Chebyshev), i1/i1e (CHLO) and entr.
// Integer and bool inputs promote to the float result dtype; half types
// compute in f32 like the CPU kernels.
#include <cmath>

#include "ops/elementwise_common.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// The CPU's digamma at 0 is copysign(inf, -x): -inf at +0, +inf at -0.
Value digamma(Builder& b, const Value& x) {
  Value r = b.unary("chlo.digamma", x);
  Value neg_zero = b.compare(b.divide(full_like(b, x, 1), x), full_like(b, x, 0), "LT");
  Value at_zero = b.select(neg_zero, full_like(b, x, INFINITY), full_like(b, x, -INFINITY));
  return b.select(b.compare(x, full_like(b, x, 0), "EQ"), at_zero, r);
}

// trigamma as the CPU kernel computes it: reflection below 1/2, six steps of
// the recurrence, then the asymptotic series (CHLO's differs by a few ulps).
Value trigamma(Builder& b, const Value& x0) {
  auto k = [&](double v) { return full_like(b, x0, v); };
  Value reflect = b.compare(x0, k(0.5), "LT");
  Value s = b.unary("sine", b.multiply(k(M_PI), x0));
  Value refl = b.negate(b.divide(k(M_PI * M_PI), b.multiply(s, s)));
  Value result = b.select(reflect, refl, k(0));
  Value x = b.select(reflect, b.subtract(k(1), x0), x0);
  for (int i = 0; i < 6; ++i) {
    result = b.add(result, b.divide(k(1), b.multiply(x, x)));
    x = b.add(x, k(1));
  }
  Value ixx = b.divide(k(1), b.multiply(x, x));
  Value series = b.multiply(ixx, b.subtract(k(1.0 / 30), b.multiply(ixx, k(1.0 / 42))));
  series = b.add(b.add(k(1), b.divide(k(1), b.multiply(k(2), x))), b.multiply(ixx, b.subtract(k(1.0 / 6), series)));
  result = b.add(result, b.divide(series, x));
  return b.select(reflect, b.negate(result), result);
}

// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2, n! rounded to the
// compute dtype as the CPU's exp(lgamma(n + 1)) is.
Value zeta_acc(Builder& b, const Value& x0, const Value& q0);
Value polygamma(Builder& b, int64_t n, const Value& x) {
  double fact = x.type.dtype == DType::F64 ? std::exp(std::lgamma(static_cast<double>(n) + 1))
                                           : std::exp(std::lgamma(static_cast<float>(n) + 1.f));
  Value z = zeta_acc(b, full_like(b, x, static_cast<double>(n + 1)), x);
  return b.multiply(full_like(b, x, n % 2 ? fact : -fact), z);
}

// polygamma(n, x); n < 0 is rejected by the meta kernel.
TORCH_TPU_LOWERING("polygamma", [](Builder& b, const OpCall& c, const Values& v) {
  int64_t n = c.arg(0).i;
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) throw std::invalid_argument("unsupported result dtype " + out.str());
  DType ct = compute_type(out.dtype);
  Value x = lift(b, c, v, 1, out.dtype, ct, out.dims);
  Value r = n == 0 ? digamma(b, x) : n == 1 ? trigamma(b, x) : polygamma(b, n, x);
  return Values{b.convert(r, out.dtype)};
});

// The CPU's Hurwitz zeta for q >= 0 (its cephes algorithm, step for step:
// direct sum until a term is below machine epsilon of the sum, else at
// least 9 terms and a > 9, then 12 Euler-Maclaurin terms). CHLO's zeta
// agrees to a few ulps for ordinary x but not where the CPU's sum saturates:
// zeta(inf, 1) is 1, zeta(inf, q < 1) inf, and the NaN once the tail's
// product overflows (x near 1e300, q > 1).
Value cephes_zeta(Builder& b, const Value& x, const Value& q) {
  static const double kTail[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                                   7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                                   -4.5979787224074726105e15, 1.8152105401943546773e17,
                                   -7.1661652561756670113e18};
  const double eps = 1.11022302462515654042e-16;
  auto k = [&](double v) { return full_like(b, x, v); };
  auto pick = [&](const Value& m, const Value& t, const Value& f) { return b.select(m, t, f); };
  Value neg_x = b.negate(x);
  Value s = b.binary("power", q, neg_x), a = q, term = k(0);
  Value done = b.compare(k(1), k(0), "LT");  // all false
  auto negligible = [&](const Value& t, const Value& sum) {
    return logical_and(b, b.compare(b.multiply(k(-eps), sum), t, "LT"), b.compare(t, b.multiply(k(eps), sum), "LT"));
  };
  // The direct loop runs while i < 9 or a <= 9: at most 11 steps for q >= 0.
  for (int i = 0; i < 11; ++i) {
    Value active = logical_not(b, done);
    if (i >= 9) active = logical_and(b, active, b.compare(a, k(9), "LE"));
    Value a1 = b.add(a, k(1)), t1 = b.binary("power", a1, neg_x), s1 = b.add(s, t1);
    a = pick(active, a1, a), term = pick(active, t1, term), s = pick(active, s1, s);
    done = logical_or(b, done, logical_and(b, active, negligible(t1, s1)));
  }
  Value direct_done = done;
  Value w = a, tail = b.subtract(b.add(s, b.divide(b.multiply(term, w), b.subtract(x, k(1)))),
                                 b.multiply(k(0.5), term));
  Value prod = k(1), kk = k(0);
  // Below float64 (f32, where the CPU has double) prod alone overflows for
  // large x: carry u = prod * term / w^j instead, one bounded factor a step.
  bool narrow = x.type.dtype != DType::F64;
  Value u = b.multiply(b.divide(x, w), term);
  for (double coef : kTail) {
    Value p1 = b.multiply(prod, b.add(x, kk)), t1 = b.divide(term, w);
    Value add = b.divide(narrow ? u : b.multiply(p1, t1), k(coef)), tail1 = b.add(tail, add);
    Value active = logical_not(b, done);
    tail = pick(active, tail1, tail);
    done = logical_or(b, done, logical_and(b, active, b.compare(b.unary("abs", b.divide(add, tail1)), k(eps), "LT")));
    kk = b.add(kk, k(1));
    prod = b.multiply(p1, b.add(x, kk)), term = b.divide(t1, w);
    if (narrow) u = b.multiply(u, b.multiply(b.divide(b.add(x, kk), w), b.divide(b.add(x, b.add(kk, k(1))), w)));
    kk = b.add(kk, k(1));
  }
  return pick(direct_done, s, tail);
}

// Hurwitz zeta(x, q) = sum_k (k + q)^-x. The CPU kernel accumulates in
// double even for float (at::acc_type), so this does too. Its special cases
// come first: inf at x == 1, NaN for x < 1, and for q <= 0 inf at integer q,
// NaN unless x is an integer.
Value zeta_acc(Builder& b, const Value& x0, const Value& q0) {
  DType acc = widest_internal_type(x0.type.dtype);
  Value x = b.convert(x0, acc), q = b.convert(q0, acc);
  auto k = [&](double v) { return full_like(b, x, v); };
  // CHLO's Euler-Maclaurin tail assumes q + 9 is well above 0; like the CPU's
  // direct sum (which runs until q + k > 9), shift q < 0 up past 0 first,
  // adding the skipped terms (q + i)^-x, one while-loop step per term.
  Value steps = b.select(b.compare(q, k(0), "LT"), b.unary("ceil", b.negate(q)), k(0));
  steps = b.select(is_nan(b, steps), k(0), b.minimum(steps, k(1e6)));
  Value head = k(0);
  if (x.type.numel() > 0) {
    Value steps_i = b.convert(steps, DType::I64);
    std::vector<int64_t> all;
    for (int64_t d = 0; d < steps_i.type.rank(); ++d) all.push_back(d);
    Value total = b.reduce({steps_i}, {b.constant_int(DType::I64, 0)}, all,
                           [](Builder& r, const Values& a) { return Values{r.maximum(a[0], a[1])}; })[0];
    TensorType scalar_i{DType::I64, {}};
    std::vector<TensorType> types{scalar_i, scalar_i, x.type, x.type, x.type, x.type};
    Values out = b.emit(
        "stablehlo.while", {b.constant_int(DType::I64, 0), total, head, x, q, steps}, "", types,
        {{types, [](Builder& r, const Values& a) { return Values{r.compare(a[0], a[1], "LT")}; }},
         {types, [](Builder& r, const Values& a) {
            const Value &i = a[0], &s = a[2], &xv = a[3], &qv = a[4], &st = a[5];
            Value i_f = r.broadcast_to(r.convert(i, xv.type.dtype), xv.type.dims);
            Value term = r.binary("power", r.add(qv, i_f), r.negate(xv));
            Value active = r.compare(i_f, st, "LT");
            Value next = r.select(active, r.add(s, term), s);
            return Values{r.add(i, r.constant_int(DType::I64, 1)), a[1], next, xv, qv, st};
          }}});
    head = out[2];
  }
  Value r = b.add(head, cephes_zeta(b, x, b.add(q, steps)));
  Value q_le0 = b.compare(q, k(0), "LE");
  Value x_frac = b.compare(x, b.unary("floor", x), "NE");
  r = b.select(logical_and(b, q_le0, x_frac), k(NAN), r);
  r = b.select(logical_and(b, q_le0, b.compare(q, b.unary("floor", q), "EQ")), k(INFINITY), r);
  r = b.select(b.compare(x, k(1), "LT"), k(NAN), r);
  r = b.select(b.compare(x, k(1), "EQ"), k(INFINITY), r);
  return b.convert(r, x0.type.dtype);
}

// Kernels the CPU has for f32/f64 only (ints/bool promote to f32).
void reject_half(const OpCall& c, const char* kernel) {
  DType t = c.outputs[0].dtype;
  if (t == DType::BF16 || t == DType::F16)
    throw NotImplemented(std::string("\"") + kernel + "\" not implemented for '" + hlo::dtype_name(t) + "'");
}

Values zeta(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) throw std::invalid_argument("unsupported result dtype " + out.str());
  reject_half(c, "zeta_cpu");
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& q) { return zeta_acc(b, x, q); });
}
TORCH_TPU_LOWERING("special_zeta", zeta);
TORCH_TPU_LOWERING("special_zeta.self_scalar", zeta);
TORCH_TPU_LOWERING("special_zeta.other_scalar", zeta);

Value i1e(Builder& b, const Value& x) { return b.unary("chlo.bessel_i1e", x); }

TORCH_TPU_LOWERING("special_i1e", [](Builder& b, const OpCall& c, const Values& v) {
  return unary_float(b, c, v, [](Builder& b, const Value& x) { return i1e(b, x); });
});
// i1(x) = i1e(x) * exp(|x|); like the CPU's, it is inf once exp(|x|) overflows.
TORCH_TPU_LOWERING("special_i1", [](Builder& b, const OpCall& c, const Values& v) {
  return unary_float(b, c, v, [](Builder& b, const Value& x) {
    return b.multiply(i1e(b, x), b.unary("exponential", b.unary("abs", x)));
  });
});

// i0e(x) = exp(-|x|) I0(x), evaluated in f64 and rounded once (the CPU's
// Chebyshev fits are good to an ulp): the power series sum (x^2/4)^k / k!^2
// up to |x| = 20, Hankel's asymptotic series
// exp(-|x|) I0 ~ (2 pi |x|)^-1/2 sum ((2k-1)!!)^2 / (k! (8|x|)^k) beyond.
Value i0e_wide(Builder& b, const Value& x0) {
  Value a = b.unary("abs", b.convert(x0, DType::F64));
  auto k = [&](double v) { return full_like(b, a, v); };
  Value small = b.compare(a, k(20), "LE");
  Value as = b.select(small, a, k(0)), al = b.select(small, k(20), a);
  Value y = b.multiply(b.multiply(as, as), k(0.25));
  Value term = k(1), sum = k(1);
  for (int i = 1; i <= 60; ++i) {
    term = b.multiply(term, b.multiply(y, k(1.0 / (static_cast<double>(i) * i))));
    sum = b.add(sum, term);
  }
  Value series = b.multiply(sum, b.unary("exponential", b.negate(as)));
  Value inv8x = b.divide(k(1), b.multiply(k(8), al));
  term = k(1);
  Value asym = k(1);
  for (int i = 1; i <= 24; ++i) {
    double odd = 2.0 * i - 1;
    term = b.multiply(term, b.multiply(inv8x, k(odd * odd / i)));
    asym = b.add(asym, term);
  }
  asym = b.multiply(asym, b.unary("rsqrt", b.multiply(k(2 * M_PI), al)));
  Value r = b.select(small, series, asym);
  return b.select(is_nan(b, a), a, r);
}

// Below float64 the CPU runs its Cephes Chebyshev expansion in the dtype,
// rounding every step (results differ from the exact value by an ulp or two,
// which i0e's gradient i1e - sgn i0e cancels into large relative errors), so
// these do the same (and hold no f64 a TPU lacks); float64 takes the
// evaluation above.
constexpr double kI0eA[] = {-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14, -4.85644678311192946090E-13,
    2.95505266312963983461E-12, -1.72682629144155570723E-11, 9.67580903537323691224E-11, -5.18979560163526290666E-10,
    2.65982372468238665035E-9, -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5, -5.75419501008210370398E-5,
    1.88502885095841655729E-4, -5.76375574538582365885E-4, 1.63947561694133579842E-3, -4.32430999505057594430E-3,
    1.05464603945949983183E-2, -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1};
constexpr double kI0eB[] = {-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16, 1.77256013305652638360E-15,
    3.81168066935262242075E-15, -9.55484669882830764870E-15, -4.15056934728722208663E-14, 1.54008621752140982691E-14,
    3.85277838274214270114E-13, 7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10, 3.39623202570838634515E-9,
    2.26666899049817806459E-8, 2.04891858946906374183E-7, 2.89137052083475648297E-6, 6.88975834691682398426E-5,
    3.36911647825569408990E-3, 8.04490411014108831608E-1};

template <size_t N>
Value chbevl(Builder& b, const Value& t, const double (&c)[N]) {
  auto k = [&](double v) { return full_like(b, t, v); };
  Value b0 = k(c[0]), b1 = k(0), b2 = k(0);
  for (size_t i = 1; i < N; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = b.add(b.subtract(b.multiply(t, b1), b2), k(c[i]));
  }
  return b.multiply(k(0.5), b.subtract(b0, b2));
}

Value i0e_narrow(Builder& b, const Value& x0) {
  auto k = [&](double v) { return full_like(b, x0, v); };
  Value x = b.unary("abs", x0);
  Value small = chbevl(b, b.subtract(b.divide(x, k(2)), k(2)), kI0eA);
  // std::sqrt of a half value is a float one: that division is in f32, rounded once.
  Value large = b.convert(b.divide(b.convert(chbevl(b, b.subtract(b.divide(k(32), x), k(2)), kI0eB), DType::F32),
                                   b.unary("sqrt", b.convert(x, DType::F32))),
                          x.type.dtype);
  return b.select(b.compare(x, k(8), "LE"), small, large);
}

TORCH_TPU_LOWERING("special_i0e", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (out.dtype != DType::F64) return Values{i0e_narrow(b, lift(b, c, v, 0, out.dtype, out.dtype, out.dims))};
  return unary_float(b, c, v, [](Builder& b, const Value& x) { return i0e_wide(b, x); });
});
// i0(x) = i0e(x) * exp(|x|), inf once exp(|x|) overflows as on the CPU.
Values i0(Builder& b, const OpCall& c, const Values& v) {
  return unary_float(b, c, v, [](Builder& b, const Value& x) {
    Value e = x.type.dtype == DType::F64 ? i0e_wide(b, x) : b.convert(i0e_narrow(b, b.convert(x, DType::F32)), x.type.dtype);
    return b.multiply(e, b.unary("exponential", b.unary("abs", x)));
  });
}
TORCH_TPU_LOWERING("i0", i0);
TORCH_TPU_LOWERING("special_modified_bessel_i0", [](Builder& b, const OpCall& c, const Values& v) {
  reject_half(c, "modified_bessel_i0_cpu");
  return i0(b, c, v);
});

// entr(x) = -x log x for x > 0, 0 at 0, -inf below 0, NaN stays NaN.
TORCH_TPU_LOWERING("special_entr", [](Builder& b, const OpCall& c, const Values& v) {
  return unary_float(b, c, v, [](Builder& b, const Value& x) {
    Value zero = full_like(b, x, 0);
    Value r = b.negate(b.multiply(x, b.unary("log", x)));
    r = b.select(b.compare(x, zero, "EQ"), zero, r);
    r = b.select(b.compare(x, zero, "LT"), full_like(b, x, -INFINITY), r);
    return b.select(is_nan(b, x), x, r);
  });
});

}  // namespace
}  // namespace torch_tpu::ops
