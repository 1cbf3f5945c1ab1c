// igamma / igammac (torch.special.gammainc / gammaincc): the regularized
// lower and upper incomplete gamma functions P(a, x) and Q(a, x), as ATen's
// calc_igamma / calc_igammac (Cephes, via SciPy) compute them, branch for
// branch: the boundary values (NaN for a or x < 0, a == 0, x == 0,
// infinities), Temme's uniform asymptotic expansion for large a near x, the
// power series (DLMF 8.11.4), the cancellation-free series for Q (8.7.3) and
// the continued fraction for Q (8.9.2), with the same constants, branch
// thresholds and stopping tests. Half types compute in f32 like the CPU
// (which runs the float kernel for them); only f64 uses f64.
// The iterations (up to 2000 steps, 25 for the expansion) are stablehlo.while
// loops over the whole tensor: each lane steps until its own stopping test
// holds (as the CPU's `break`), the loop ends once no lane is active.
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "ops/elementwise_common.h"
#include "ops/registry.h"
#include "ops/special_igamma_table.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// The CPU kernel's constants for its dtype (float's for f32).
struct Limits {
  double machep, maxlog, big, biginv;
};
Limits limits(DType t) {
  if (t == DType::F64)
    return {1.11022302462515654042E-16, 7.09782712893383996843E2, 4.503599627370496e15, 2.22044604925031308085e-16};
  return {5.9604644775390625E-8, 88.72283905206835, 16777216., 5.9604644775390625E-8};
}

constexpr int64_t kMaxIter = 2000;
constexpr double kLanczosG = 6.024680040776729583740234375;
constexpr double kExp1 = 2.718281828459045;

Value any_lane(Builder& b, const Value& pred) { return any(b, b.reshape(pred, {pred.type.numel()})); }

// One step on every lane: the next state, and where the lane stops after it.
using Step = std::function<std::pair<Values, Value>(Builder&, const Value& iter, const Values& fixed,
                                                    const Values& state)>;

// Runs `step` on the lanes of `active` (a bool tensor shaped like the values)
// until each one stops or `max_iter` steps ran, as one stablehlo.while over the
// whole tensor that ends once no lane is active; stopped lanes keep their
// state. `fixed` values ride along unchanged; `iter` is the 0-d i64 step count.
Values masked_loop(Builder& b, const Value& active, const Values& fixed, const Values& state, int64_t max_iter,
                   const Step& step) {
  TensorType scalar_i{DType::I64, {}};
  std::vector<TensorType> types{scalar_i, active.type};
  Values init{b.constant_int(DType::I64, 0), active};
  for (const Value& f : fixed) types.push_back(f.type), init.push_back(f);
  for (const Value& s : state) types.push_back(s.type), init.push_back(s);
  size_t nf = fixed.size(), ns = state.size();
  Values out = b.emit(
      "stablehlo.while", init, "", types,
      {{types,
        [max_iter](Builder& r, const Values& a) {
          Value more = r.compare(a[0], r.constant_int(DType::I64, max_iter), "LT");
          return Values{logical_and(r, more, any_lane(r, a[1]))};
        }},
       {types, [&step, nf, ns](Builder& r, const Values& a) {
          Values f(a.begin() + 2, a.begin() + 2 + nf), s(a.begin() + 2 + nf, a.end());
          auto [next, stop] = step(r, a[0], f, s);
          const Value& act = a[1];
          Values res{r.add(a[0], r.constant_int(DType::I64, 1)), logical_and(r, act, logical_not(r, stop))};
          for (const Value& x : f) res.push_back(x);
          for (size_t i = 0; i < ns; ++i) res.push_back(r.select(act, next[i], s[i]));
          return res;
        }}});
  return Values(out.begin() + 2 + nf, out.end());
}

// Boost's Lanczos sum scaled by exp(g) (lanczos_sum_expg_scaled), via the
// CPU's ratevl: Horner in x, or in 1/x with the coefficients reversed for |x| > 1.
Value lanczos_sum_expg_scaled(Builder& b, const Value& x) {
  static const double num[13] = {0.006061842346248906525783753964555936883222, 0.5098416655656676188125178644804694509993,
                                 19.51992788247617482847860966235652136208,  449.9445569063168119446858607650988409623,
                                 6955.999602515376140356310115515198987526,  75999.29304014542649875303443598909137092,
                                 601859.6171681098786670226533699352302507,  3481712.15498064590882071018964774556468,
                                 14605578.08768506808414169982791359218571,  43338889.32467613834773723740590533316085,
                                 86363131.28813859145546927288977868422342,  103794043.1163445451906271053616070238554,
                                 56906521.91347156388090791033559122686859};
  static const double den[13] = {1., 66., 1925., 32670., 357423., 2637558., 13339535., 45995730., 105258076.,
                                 150917976., 120543840., 39916800., 0.};
  auto k = [&](double v) { return full_like(b, x, v); };
  Value big = b.compare(b.unary("abs", x), k(1), "GT");
  Value y = b.select(big, b.divide(k(1), x), x);
  auto horner = [&](const double (&c)[13]) {
    Value r = b.select(big, k(c[12]), k(c[0]));
    for (int i = 1; i <= 12; ++i) r = b.add(b.multiply(r, y), b.select(big, k(c[12 - i]), k(c[i])));
    return r;
  };
  return b.divide(horner(num), horner(den));  // pow(x, N - M) = 1
}

// x^a e^-x / Gamma(a) (_igam_helper_fac).
Value igam_fac(Builder& b, const Value& a, const Value& x, const Value& lgamma_a, const Limits& lim) {
  auto k = [&](double v) { return full_like(b, x, v); };
  Value far = b.compare(b.unary("abs", b.subtract(a, x)), b.multiply(k(0.4), b.unary("abs", a)), "GT");
  Value ax = b.subtract(b.subtract(b.multiply(a, b.unary("log", x)), x), lgamma_a);
  Value r_far = b.select(b.compare(ax, k(-lim.maxlog), "LT"), k(0), b.unary("exponential", ax));
  Value fac = b.subtract(b.add(a, k(kLanczosG)), k(0.5));
  Value res = b.divide(b.unary("sqrt", b.divide(fac, k(kExp1))), lanczos_sum_expg_scaled(b, a));
  Value small = logical_and(b, b.compare(a, k(200), "LT"), b.compare(x, k(200), "LT"));
  Value ratio = b.divide(x, fac), ex = b.unary("exponential", b.subtract(a, x));
  Value pw = b.binary("power", ratio, a);
  Value r_small = b.multiply(res, b.multiply(ex, pw));
  // XLA flushes subnormals to zero where the CPU's pow returns one (float,
  // (x / fac)^a below 2^-126 while exp(a - x) brings the product back up):
  // there, two half powers instead.
  double min_normal = x.type.dtype == DType::F64 ? 2.2250738585072014e-308 : 1.1754943508222875e-38;
  Value half_pw = b.binary("power", ratio, b.multiply(a, k(0.5)));
  Value r_split = b.multiply(b.multiply(b.multiply(res, ex), half_pw), half_pw);
  r_small = b.select(b.compare(pw, k(min_normal), "LT"), r_split, r_small);
  Value numfac = b.divide(b.add(b.subtract(b.subtract(x, a), k(kLanczosG)), k(0.5)), fac);
  Value e = b.add(b.multiply(a, b.subtract(b.unary("log_plus_one", numfac), numfac)),
                  b.divide(b.multiply(x, k(0.5 - kLanczosG)), fac));
  Value r_large = b.multiply(res, b.unary("exponential", e));
  return b.select(far, r_far, b.select(small, r_small, r_large));
}

// P(a, x) by its power series (_igam_helper_series), on the lanes of `lanes`;
// `ax` is igam_fac(a, x).
Value igam_series(Builder& b, const Value& a, const Value& x, const Value& ax, const Value& lanes, const Limits& lim) {
  Value zero = b.compare(ax, full_like(b, ax, 0), "EQ");
  Value one = full_like(b, x, 1);
  double eps = lim.machep;
  Values s = masked_loop(b, logical_and(b, lanes, logical_not(b, zero)), {x}, {a, one, one}, kMaxIter,
                         [eps](Builder& r, const Value&, const Values& f, const Values& st) {
                           Value rr = r.add(st[0], full_like(r, st[0], 1));
                           Value c = r.multiply(st[1], r.divide(f[0], rr));
                           Value ans = r.add(st[2], c);
                           Value stop = r.compare(c, r.multiply(full_like(r, ans, eps), ans), "LE");
                           return std::make_pair(Values{rr, c, ans}, stop);
                         });
  return b.select(zero, full_like(b, x, 0), b.divide(b.multiply(s[2], ax), a));
}

// Q(a, x) by DLMF 8.7.3 (_igamc_helper_series), on the lanes of `lanes`.
Value igamc_series(Builder& b, const Value& a, const Value& x, const Value& lgamma_a, const Value& lanes,
                   const Limits& lim) {
  auto k = [&](double v) { return full_like(b, x, v); };
  double eps = lim.machep;
  Values s = masked_loop(b, lanes, {a, x}, {k(0), k(1), k(0)}, kMaxIter - 1,
                         [eps](Builder& r, const Value&, const Values& f, const Values& st) {
                           Value n = r.add(st[0], full_like(r, st[0], 1));
                           Value fac = r.multiply(st[1], r.divide(r.negate(f[1]), n));
                           Value term = r.divide(fac, r.add(f[0], n));
                           Value sum = r.add(st[2], term);
                           Value stop = r.compare(r.unary("abs", term),
                                                  r.multiply(full_like(r, sum, eps), r.unary("abs", sum)), "LE");
                           return std::make_pair(Values{n, fac, sum}, stop);
                         });
  Value alogx = b.multiply(a, b.unary("log", x));
  Value term = b.negate(b.unary("exponential_minus_one", b.subtract(alogx, b.unary("chlo.lgamma", b.add(k(1), a)))));
  Value scale = b.unary("exponential", b.subtract(alogx, lgamma_a));
  return b.subtract(term, b.multiply(scale, s[2]));
}

// Q(a, x) by its continued fraction (_igamc_helper_continued_fraction).
Value igamc_continued_fraction(Builder& b, const Value& a, const Value& x, const Value& ax, const Value& lanes,
                               const Limits& lim) {
  auto k = [&](double v) { return full_like(b, x, v); };
  Value zero = b.compare(ax, k(0), "EQ");
  Value y = b.subtract(k(1), a);
  Value z = b.add(b.add(x, y), k(1));
  Value pkm1 = b.add(x, k(1)), qkm1 = b.multiply(z, x);
  Value ans = b.divide(pkm1, qkm1);
  Limits l = lim;
  // state: c, y, z, pkm2, pkm1, qkm2, qkm1, ans
  Values s = masked_loop(
      b, logical_and(b, lanes, logical_not(b, zero)), {}, {k(0), y, z, k(1), pkm1, x, qkm1, ans}, kMaxIter,
      [l](Builder& r, const Value&, const Values&, const Values& st) {
        auto k = [&](double v) { return full_like(r, st[0], v); };
        Value c = r.add(st[0], k(1)), y = r.add(st[1], k(1)), z = r.add(st[2], k(2));
        Value yc = r.multiply(y, c);
        Value pk = r.subtract(r.multiply(st[4], z), r.multiply(st[3], yc));
        Value qk = r.subtract(r.multiply(st[6], z), r.multiply(st[5], yc));
        Value nz = r.compare(qk, k(0), "NE");
        Value ratio = r.divide(pk, qk);
        Value t = r.select(nz, r.unary("abs", r.divide(r.subtract(st[7], ratio), ratio)), k(1));
        Value ans = r.select(nz, ratio, st[7]);
        Value pkm2 = st[4], pkm1 = pk, qkm2 = st[6], qkm1 = qk;
        Value big = r.compare(r.unary("abs", pk), k(l.big), "GT");
        auto scale = [&](const Value& v) { return r.select(big, r.multiply(v, k(l.biginv)), v); };
        Value stop = r.compare(t, k(l.machep), "LE");
        return std::make_pair(Values{c, y, z, scale(pkm2), scale(pkm1), scale(qkm2), scale(qkm1), ans}, stop);
      });
  return b.select(zero, k(0), b.multiply(s[7], ax));
}

// The d[k][n] table as a 25x25 constant of `t` (rounded to float for f32, as
// the CPU's float kernel holds it).
Value asym_table(Builder& b, DType t) {
  std::string lit = "[";
  char buf[40];
  for (int i = 0; i < 25; ++i) {
    lit += i ? ", [" : "[";
    for (int j = 0; j < 25; ++j) {
      double v = igamma_table::kAsymD[i][j];
      if (t != DType::F64) v = static_cast<double>(static_cast<float>(v));
      std::snprintf(buf, sizeof(buf), "%s%.17g", j ? ", " : "", v);
      lit += buf;
    }
    lit += "]";
  }
  lit += "]";
  TensorType type(t, {25, 25});
  return b.emit1("constant", {}, "value = dense<" + lit + "> : " + type.str(), type);
}

// P (lower) or Q by the uniform asymptotic expansion (DLMF 8.12.3/8.12.4,
// _igam_helper_asymptotic_series), on the lanes of `lanes`.
Value igam_asymptotic(Builder& b, const Value& a, const Value& x, const Value& lanes, bool lower, const Limits& lim) {
  auto k = [&](double v) { return full_like(b, x, v); };
  double sgn = lower ? -1 : 1;
  Value lambda = b.divide(x, a);
  Value sigma = b.divide(b.subtract(x, a), a);
  Value e = b.unary("sqrt", b.multiply(k(-2), b.subtract(b.unary("log_plus_one", sigma), sigma)));
  Value eta = b.select(b.compare(lambda, k(1), "GT"), e,
                       b.select(b.compare(lambda, k(1), "LT"), b.negate(e), k(0)));
  Value res = b.multiply(
      k(0.5), b.unary("chlo.erfc", b.multiply(b.multiply(k(sgn), eta), b.unary("sqrt", b.divide(a, k(2))))));
  Value table = asym_table(b, x.type.dtype);
  double eps = lim.machep;
  // state: sum, afac, |previous term|
  Values s = masked_loop(
      b, lanes, {a, eta, table}, {k(0), k(1), k(INFINITY)}, 25,
      [eps](Builder& r, const Value& iter, const Values& f, const Values& st) {
        const Value &a = f[0], &eta = f[1];
        auto k = [&](double v) { return full_like(r, eta, v); };
        Value row = r.reshape(r.dynamic_slice(f[2], {iter, r.constant_int(DType::I64, 0)}, {1, 25}), {25});
        auto coef = [&](int n) {
          return r.broadcast_in_dim(r.reshape(r.slice(row, {n}, {n + 1}, {1}), {}), eta.type.dims, {});
        };
        // ck = sum_n d[k][n] eta^n, up to the first negligible term.
        Value ck = coef(0), etapow = k(1);
        Value going = r.compare(k(0), k(1), "LT");  // all true
        for (int n = 1; n < 25; ++n) {
          etapow = r.multiply(eta, etapow);
          Value ckterm = r.multiply(coef(n), etapow);
          Value ck1 = r.add(ck, ckterm);
          ck = r.select(going, ck1, ck);
          Value small = r.compare(r.unary("abs", ckterm), r.multiply(k(eps), r.unary("abs", ck1)), "LT");
          going = logical_and(r, going, logical_not(r, small));
        }
        Value term = r.multiply(ck, st[1]);
        Value absterm = r.unary("abs", term);
        Value diverging = r.compare(absterm, st[2], "GT");
        Value sum1 = r.add(st[0], term);
        Value sum = r.select(diverging, st[0], sum1);
        Value small = r.compare(absterm, r.multiply(k(eps), r.unary("abs", sum1)), "LT");
        return std::make_pair(Values{sum, r.divide(st[1], a), absterm}, logical_or(r, diverging, small));
      });
  // The CPU's factor is sqrt(2 pi a) with pi in float, in either dtype.
  double two_pi = 2.0 * static_cast<double>(static_cast<float>(M_PI));
  Value expo = b.unary("exponential", b.multiply(b.multiply(b.multiply(k(-0.5), a), eta), eta));
  Value tail = b.divide(b.multiply(b.multiply(k(sgn), expo), s[0]), b.unary("sqrt", b.multiply(k(two_pi), a)));
  return b.add(res, tail);
}

// calc_igamma (lower) / calc_igammac (upper) on values of the compute dtype.
Value igamma_impl(Builder& b, const Value& a, const Value& x, bool lower) {
  if (x.type.numel() == 0) return x;
  Limits lim = limits(x.type.dtype);
  auto k = [&](double v) { return full_like(b, x, v); };
  auto lt = [&](const Value& p, const Value& q) { return b.compare(p, q, "LT"); };
  auto gt = [&](const Value& p, const Value& q) { return b.compare(p, q, "GT"); };
  auto eq = [&](const Value& p, const Value& q) { return b.compare(p, q, "EQ"); };
  auto AND = [&](const Value& p, const Value& q) { return logical_and(b, p, q); };
  auto NOT = [&](const Value& p) { return logical_not(b, p); };
  Value inf_a = eq(b.unary("abs", a), k(INFINITY)), inf_x = eq(b.unary("abs", x), k(INFINITY));
  Value nan = logical_or(b, is_nan(b, a), is_nan(b, x));
  Value special = logical_or(b, logical_or(b, lt(x, k(0)), lt(a, k(0))), logical_or(b, eq(a, k(0)), eq(x, k(0))));
  special = logical_or(b, special, logical_or(b, inf_a, inf_x));
  // Lanes of the general evaluation (NaN ones end as NaN on every path).
  Value general = AND(NOT(special), NOT(nan));
  Value absxma = b.divide(b.unary("abs", b.subtract(x, a)), a);
  Value asym = logical_or(b, AND(AND(gt(a, k(20)), lt(a, k(200))), lt(absxma, k(0.3))),
                          AND(gt(a, k(200)), lt(absxma, b.divide(k(4.5), b.unary("sqrt", a)))));
  Value rest = AND(general, NOT(asym));
  Value use_series, use_cseries, use_cf, complement;  // complement: the result is 1 - that
  if (lower) {
    Value via_q = AND(rest, AND(gt(x, k(1)), gt(x, a)));
    Value x_big = gt(x, k(1.1));
    use_series = AND(rest, NOT(via_q));
    use_cf = AND(via_q, x_big);
    use_cseries = AND(via_q, NOT(x_big));
    complement = via_q;
  } else {
    Value x_big = gt(x, k(1.1)), x_small = b.compare(x, k(0.5), "LE");
    Value p_big = b.select(x_big, lt(x, a),
                           b.select(x_small, lt(b.divide(k(-0.4), b.unary("log", x)), a), lt(b.multiply(x, k(1.1)), a)));
    use_series = AND(rest, p_big);
    use_cf = AND(AND(rest, NOT(p_big)), x_big);
    use_cseries = AND(AND(rest, NOT(p_big)), NOT(x_big));
    complement = use_series;
  }
  Value r = igam_asymptotic(b, a, x, AND(general, asym), lower, lim);
  Value lgamma_a = b.unary("chlo.lgamma", a);
  Value ax = igam_fac(b, a, x, lgamma_a, lim);
  r = b.select(use_series, igam_series(b, a, x, ax, use_series, lim), r);
  r = b.select(use_cseries, igamc_series(b, a, x, lgamma_a, use_cseries, lim), r);
  r = b.select(use_cf, igamc_continued_fraction(b, a, x, ax, use_cf, lim), r);
  r = b.select(complement, b.subtract(k(1), r), r);
  // The boundary cases, in the CPU's order (the first that holds wins).
  double at_inf_x = lower ? 1 : 0;
  r = b.select(nan, k(NAN), r);
  r = b.select(inf_x, k(at_inf_x), r);
  r = b.select(inf_a, b.select(inf_x, k(NAN), k(1 - at_inf_x)), r);
  r = b.select(eq(x, k(0)), k(1 - at_inf_x), r);
  r = b.select(eq(a, k(0)), b.select(gt(x, k(0)), k(at_inf_x), k(NAN)), r);
  return b.select(logical_or(b, lt(x, k(0)), lt(a, k(0))), k(NAN), r);
}

Values igamma_rule(Builder& b, const OpCall& c, const Values& v, bool lower) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype) || hlo::is_float8(out.dtype))
    not_implemented_for(lower ? "igamma_cpu" : "igammac_cpu", out.dtype);
  return binary_compute(b, c, v, 0, 1,
                        [lower](Builder& b, const Value& a, const Value& x) { return igamma_impl(b, a, x, lower); });
}

TORCH_TPU_LOWERING("igamma", [](Builder& b, const OpCall& c, const Values& v) { return igamma_rule(b, c, v, true); });
TORCH_TPU_LOWERING("igammac", [](Builder& b, const OpCall& c, const Values& v) { return igamma_rule(b, c, v, false); });

}  // namespace
}  // namespace torch_tpu::ops
