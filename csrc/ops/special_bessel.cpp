// Bessel functions of the first and second kind, orders 0 and 1 (j0, j1,
// y0, y1), and the spherical j0, evaluated as the CPU evaluates them: Cephes'
// rational fits in x^2 up to x = 5, beyond it the Hankel asymptotic form
// sqrt(2 / (pi x)) (P cos(x - phase) -+ (5/x) Q sin(x - phase)) with P and Q
// rational in 25 / x^2, in the input's float dtype, the same operation order.
// Ints and bool promote to float32; the CPU has no half kernels for these.
#include <cmath>

#include "ops/elementwise_common.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// Coefficients (highest power first) of the Cephes fits, as the CPU has them.
constexpr double kJ0_PP[] = {7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
    5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00, 9.99999999999999997821e-01};
constexpr double kJ0_PQ[] = {9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
    5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00, 1.00000000000000000218e+00};
constexpr double kJ0_QP[] = {-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
    -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
    -5.14105326766599330220e+01, -6.05014350600728481186e+00};
constexpr double kJ0_QQ[] = {6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
    7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03, 2.42005740240291393179e+02};
constexpr double kJ0_RP[] = {-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
    9.70862251047306323952e+15};
constexpr double kJ0_RQ[] = {4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
    1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14, 3.18121955943204943306e+16,
    1.71086294081043136091e+18};
constexpr double kJ1_PP[] = {7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
    5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00, 1.00000000000000000254e+00};
constexpr double kJ1_PQ[] = {5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
    5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00, 9.99999999999999997461e-01};
constexpr double kJ1_QP[] = {5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
    3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02, 2.11688757100572135698e+02,
    2.52070205858023719784e+01};
constexpr double kJ1_QQ[] = {7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
    9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03, 3.36093607810698293419e+02};
constexpr double kJ1_RP[] = {-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
    3.68295732863852883286e+15};
constexpr double kJ1_RQ[] = {6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
    2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14, 8.95222336184627338078e+16,
    5.32278620332680085395e+18};
constexpr double kY0_PP[] = {7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
    5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00, 9.99999999999999997821e-01};
constexpr double kY0_PQ[] = {9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
    5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00, 1.00000000000000000218e+00};
constexpr double kY0_QP[] = {-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
    -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
    -5.14105326766599330220e+01, -6.05014350600728481186e+00};
constexpr double kY0_QQ[] = {6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
    7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03, 2.42005740240291393179e+02};
constexpr double kY0_YP[] = {1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
    -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15, 4.42733268572569800351e+16,
    -1.84950800436986690637e+16};
constexpr double kY0_YQ[] = {1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
    8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15, 2.50596256172653059228e+17};
constexpr double kY1_PP[] = {7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
    5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00, 1.00000000000000000254e+00};
constexpr double kY1_PQ[] = {5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
    5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00, 9.99999999999999997461e-01};
constexpr double kY1_QP[] = {5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
    3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02, 2.11688757100572135698e+02,
    2.52070205858023719784e+01};
constexpr double kY1_QQ[] = {7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
    9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03, 3.36093607810698293419e+02};
constexpr double kY1_YP[] = {1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
    -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17};
constexpr double kY1_YQ[] = {5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
    1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14, 6.87141087355300489866e+16,
    3.97270608116560655612e+18};

template <size_t N>
Value horner(Builder& b, const Value& z, const double (&c)[N]) {
  Value r = full_like(b, z, c[0]);
  for (size_t i = 1; i < N; ++i) r = b.add(b.multiply(r, z), full_like(b, z, c[i]));
  return r;
}

struct Asymptotic {
  const double (&pp)[7];
  const double (&pq)[7];
  const double (&qp)[8];
  const double (&qq)[7];
  double phase;      // pi/4 for order 0, 3 pi/4 for order 1
  bool second_kind;  // y: P sin + (5/x) Q cos; j: P cos - (5/x) Q sin
  bool z_as_square;  // order 1 forms z as (5/x)(5/x), order 0 as 25/(x x)
};

// x > 5 (values at or below 5 are replaced by 5 so the branch stays finite).
Value asymptotic(Builder& b, const Value& x0, const Asymptotic& a) {
  auto k = [&](double v) { return full_like(b, x0, v); };
  Value x = b.maximum(x0, k(5));
  Value f = b.divide(k(5), x);
  Value z = a.z_as_square ? b.multiply(f, f) : b.divide(k(25), b.multiply(x, x));
  Value p = b.divide(horner(b, z, a.pp), horner(b, z, a.pq));
  Value q = b.multiply(f, b.divide(horner(b, z, a.qp), horner(b, z, a.qq)));
  Value arg = b.subtract(x, k(a.phase));
  Value s = b.unary("sine", arg), c = b.unary("cosine", arg);
  Value r = a.second_kind ? b.add(b.multiply(p, s), b.multiply(q, c)) : b.subtract(b.multiply(p, c), b.multiply(q, s));
  return b.divide(b.multiply(r, k(0.797884560802865355879892119868763737)), b.unary("sqrt", x));
}

constexpr double kQuarterPi = 0.785398163397448309615660845819875721;
constexpr double kThreeQuarterPi = 2.356194490192344928846982537459627163;
constexpr double kTwoOverPi = 0.636619772367581343075535053490057448;

// j0 of |x|: (x^2 - r1^2)(x^2 - r2^2) RP/RQ (r the first two zeros) up to 5.
Value j0(Builder& b, const Value& x0) {
  auto k = [&](double v) { return full_like(b, x0, v); };
  Value x = b.unary("abs", x0);
  Value xs = b.minimum(x, k(5));
  Value x2 = b.multiply(xs, xs);
  Value small = b.divide(b.multiply(b.multiply(b.subtract(x2, k(5.78318596294678452118e+00)),
                                               b.subtract(x2, k(3.04712623436620863991e+01))),
                                    horner(b, x2, kJ0_RP)),
                         horner(b, x2, kJ0_RQ));
  small = b.select(b.compare(xs, k(1e-5), "LT"), b.subtract(k(1), b.divide(x2, k(4))), small);
  Value large = asymptotic(b, x, {kJ0_PP, kJ0_PQ, kJ0_QP, kJ0_QQ, kQuarterPi, false, false});
  return b.select(b.compare(x, k(5), "LE"), small, large);
}

// j1, odd: x (x^2 - r1^2)(x^2 - r2^2) RP/RQ up to 5.
Value j1(Builder& b, const Value& x0) {
  auto k = [&](double v) { return full_like(b, x0, v); };
  Value x = b.unary("abs", x0);
  Value xs = b.minimum(x, k(5));
  Value x2 = b.multiply(xs, xs);
  Value small = b.multiply(b.divide(horner(b, x2, kJ1_RP), horner(b, x2, kJ1_RQ)), xs);
  small = b.multiply(b.multiply(small, b.subtract(x2, k(1.46819706421238932572e+01))),
                     b.subtract(x2, k(4.92184563216946036703e+01)));
  Value large = asymptotic(b, x, {kJ1_PP, kJ1_PQ, kJ1_QP, kJ1_QQ, kThreeQuarterPi, false, true});
  Value r = b.select(b.compare(x, k(5), "LE"), small, large);
  return b.select(b.compare(x0, k(0), "LT"), b.negate(r), r);
}

// y0 = YP/YQ + (2/pi) log(x) j0(x) up to 5; -inf at 0, NaN below.
Value y0(Builder& b, const Value& x) {
  auto k = [&](double v) { return full_like(b, x, v); };
  Value xs = b.minimum(x, k(5));
  Value x2 = b.multiply(xs, xs);
  Value small = b.add(b.divide(horner(b, x2, kY0_YP), horner(b, x2, kY0_YQ)),
                      b.multiply(b.multiply(k(kTwoOverPi), b.unary("log", xs)), j0(b, xs)));
  Value large = asymptotic(b, x, {kY0_PP, kY0_PQ, kY0_QP, kY0_QQ, kQuarterPi, true, false});
  Value r = b.select(b.compare(x, k(5), "LE"), small, large);
  r = b.select(b.compare(x, k(0), "LT"), k(NAN), r);
  return b.select(b.compare(x, k(0), "EQ"), k(-INFINITY), r);
}

// y1 = x YP/YQ + (2/pi)(j1(x) log(x) - 1/x) up to 5; -inf at 0, NaN below.
Value y1(Builder& b, const Value& x) {
  auto k = [&](double v) { return full_like(b, x, v); };
  Value xs = b.minimum(x, k(5));
  Value x2 = b.multiply(xs, xs);
  Value small = b.add(b.multiply(xs, b.divide(horner(b, x2, kY1_YP), horner(b, x2, kY1_YQ))),
                      b.multiply(k(kTwoOverPi), b.subtract(b.multiply(j1(b, xs), b.unary("log", xs)),
                                                           b.divide(k(1), xs))));
  Value large = asymptotic(b, x, {kY1_PP, kY1_PQ, kY1_QP, kY1_QQ, kThreeQuarterPi, true, true});
  Value r = b.select(b.compare(x, k(5), "LE"), small, large);
  r = b.select(b.compare(x, k(0), "LT"), k(NAN), r);
  return b.select(b.compare(x, k(0), "EQ"), k(-INFINITY), r);
}

// sin(x)/x, its Taylor series below 1/2, 0 at +-inf.
Value spherical_j0(Builder& b, const Value& x) {
  auto k = [&](double v) { return full_like(b, x, v); };
  Value x2 = b.multiply(x, x);
  const double c[] = {1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0};
  Value s = k(c[0]);
  for (int i = 1; i < 6; ++i) s = b.add(k(c[i]), b.multiply(x2, s));
  Value series = b.add(k(1), b.multiply(x2, s));
  Value r = b.select(b.compare(b.unary("abs", x), k(0.5), "LT"), series, b.divide(b.unary("sine", x), x));
  return b.select(b.compare(b.unary("abs", x), k(INFINITY), "EQ"), k(0), r);
}

void reject_half(const OpCall& c, const char* kernel) {
  DType t = c.outputs[0].dtype;
  if (t == DType::BF16 || t == DType::F16)
    throw NotImplemented(std::string("\"") + kernel + "\" not implemented for '" + hlo::dtype_name(t) + "'");
}

#define BESSEL_RULE(op, kernel, fn)                                                \
  TORCH_TPU_LOWERING(op, [](Builder& b, const OpCall& c, const Values& v) {        \
    reject_half(c, kernel);                                                        \
    return unary_float(b, c, v, [](Builder& b, const Value& x) { return fn(b, x); }); \
  })
BESSEL_RULE("special_bessel_j0", "bessel_j0_cpu", j0);
BESSEL_RULE("special_bessel_j1", "bessel_j1_cpu", j1);
BESSEL_RULE("special_bessel_y0", "bessel_y0_cpu", y0);
BESSEL_RULE("special_bessel_y1", "bessel_y1_cpu", y1);
BESSEL_RULE("special_spherical_bessel_j0", "spherical_bessel_j0_cpu", spherical_j0);

}  // namespace
}  // namespace torch_tpu::ops
