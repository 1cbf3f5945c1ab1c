// torch.special functions from CHLO or short identities: polygamma (digamma,
// the CPU's trigamma, then n! zeta(n + 1, x)), Hurwitz zeta (in f64 like the
// CPU's accumulator), Bessel i0/i0e (series in f64), i1/i1e (CHLO) and entr.
// Integer and bool inputs promote to the float result dtype; half types
// compute in f32 like the CPU kernels.
#include <cmath>

#include "ops/elementwise_common.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"

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

// Hurwitz zeta(x, q) = sum_k (k + q)^-x. The CPU kernel accumulates in
// double even for float (at::acc_type), so this does too: f32 sums miss by a
// few ulps. Its special cases come first: inf at x == 1, NaN for x < 1, and
// for q <= 0 inf at integer q, NaN unless x is an integer.
Value zeta_acc(Builder& b, const Value& x0, const Value& q0) {
  DType acc = DType::F64;
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
  Value r = b.add(head, b.emit1("chlo.zeta", {x, b.add(q, steps)}, "", x.type));
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

TORCH_TPU_LOWERING("special_i0e", [](Builder& b, const OpCall& c, const Values& v) {
  return unary_float(b, c, v, [](Builder& b, const Value& x) { return b.convert(i0e_wide(b, x), x.type.dtype); });
});
// i0(x) = i0e(x) * exp(|x|), inf once exp(|x|) overflows as on the CPU.
Values i0(Builder& b, const OpCall& c, const Values& v) {
  return unary_float(b, c, v, [](Builder& b, const Value& x) {
    return b.multiply(b.convert(i0e_wide(b, x), x.type.dtype), b.unary("exponential", b.unary("abs", x)));
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
