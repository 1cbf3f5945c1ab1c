// airy_ai as the CPU evaluates it: for x < -2.09 the oscillatory asymptotic
// form with rational fits in z^2 (z = 1 / zeta, zeta = 2/3 (-x)^(3/2)); for
// x >= 2.09 the decaying one with fits in 1/zeta (alone beyond 8.32);
// otherwise the Maclaurin series f and g of Ai = c1 f - c2 g, summed until a
// term is below the dtype's epsilon (an unrolled loop whose steps freeze an
// element once it has converged, as the CPU's per-element loop stops). In the
// input's float dtype; ints and bool promote to float32; no half kernel.
#include <cmath>
#include <limits>

#include "ops/elementwise_common.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// Fits (highest power first), as the CPU has them.
constexpr double kAN[] = {3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
    1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01, 1.40264691163389668864e+01,
    9.99999999999999995305e-01};
constexpr double kAD[] = {5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
    1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01, 1.40959135607834029598e+01,
    1.00000000000000000470e+00};
constexpr double kAFN[] = {-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
    -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
    -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08};
constexpr double kAFD[] = {1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
    9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01, 4.40291641615211203805e-03,
    7.54720348287414296618e-05, 4.51850092970580378464e-07};
constexpr double kAGN[] = {1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
    9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02, 5.85804113048388458567e-03,
    2.82851600836737019778e-04, 6.98793669997260967291e-06, 8.11789239554389293311e-08, 3.41551784765923618484e-10};
constexpr double kAGD[] = {9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
    5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02, 4.12656523824222607191e-03,
    1.01259085116509135510e-04, 1.17166733214413521882e-06, 4.91834570062930015649e-09};

template <size_t N>
Value horner(Builder& b, const Value& z, const double (&c)[N]) {
  Value r = full_like(b, z, c[0]);
  for (size_t i = 1; i < N; ++i) r = b.add(b.multiply(r, z), full_like(b, z, c[i]));
  return r;
}

Value airy_ai(Builder& b, const Value& x) {
  auto k = [&](double v) { return full_like(b, x, v); };
  bool f64 = x.type.dtype == DType::F64;
  // Oscillatory side; x clamped so the unused branch stays finite.
  Value xn = b.minimum(x, k(-2.09));
  Value zeta_n = b.divide(b.multiply(b.multiply(k(-2), xn), b.unary("sqrt", b.negate(xn))), k(3));
  Value z = b.divide(k(1), zeta_n);
  Value z2 = b.multiply(z, z);
  Value t = b.add(zeta_n, b.multiply(k(0.25), k(M_PI)));
  Value fa = b.add(k(1), b.divide(b.multiply(z2, horner(b, z2, kAFN)), horner(b, z2, kAFD)));
  Value ga = b.divide(b.multiply(z, horner(b, z2, kAGN)), horner(b, z2, kAGD));
  Value osc = b.multiply(b.divide(k(5.64189583547756286948e-01), b.unary("sqrt", b.unary("sqrt", b.negate(xn)))),
                         b.subtract(b.multiply(b.unary("sine", t), fa), b.multiply(b.unary("cosine", t), ga)));
  // Decaying side.
  Value xp = b.maximum(x, k(2.09));
  Value zeta = b.divide(b.multiply(b.multiply(k(2), xp), b.unary("sqrt", xp)), k(3));
  Value iz = b.divide(k(1), zeta);
  Value ratio = b.divide(horner(b, iz, kAN), horner(b, iz, kAD));
  Value dec = b.divide(b.multiply(k(5.64189583547756286948e-01), ratio),
                       b.multiply(b.multiply(k(2), b.unary("sqrt", b.unary("sqrt", xp))), b.unary("exponential", zeta)));
  // Maclaurin series on [-2.09, 2.09): 8 steps converge in f32 (about 12 in f64).
  Value f = k(1), g = x, m = k(1), n = x, tol = k(1);
  Value cube = b.multiply(b.multiply(x, x), x);
  Value eps = k(f64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon());
  int steps = f64 ? 20 : 12;
  for (int j = 0; j < steps; ++j) {
    Value active = b.compare(tol, eps, "GT");
    Value k1 = k(3.0 * j + 2), k2 = k(3.0 * j + 3), k3 = k(3.0 * j + 4);
    Value m2 = b.divide(b.divide(b.multiply(m, cube), k1), k2);
    Value n2 = b.divide(b.divide(b.multiply(n, cube), k2), k3);
    Value f2 = b.add(f, m2), g2 = b.add(g, n2);
    tol = b.select(active, b.unary("abs", b.divide(m2, f2)), tol);
    m = b.select(active, m2, m);
    n = b.select(active, n2, n);
    f = b.select(active, f2, f);
    g = b.select(active, g2, g);
  }
  Value series = b.subtract(b.multiply(k(0.355028053887817239260), f), b.multiply(k(0.258819403792806798405), g));
  Value r = b.select(b.compare(x, k(2.09), "GE"), dec, series);
  r = b.select(b.compare(x, k(8.3203353), "GT"), dec, r);
  r = b.select(b.compare(x, k(-2.09), "LT"), osc, r);
  r = b.select(b.compare(x, k(103.892), "GT"), k(0), r);
  return b.select(b.compare(b.unary("abs", x), k(INFINITY), "EQ"), k(NAN), r);
}

TORCH_TPU_LOWERING("special_airy_ai", [](Builder& b, const OpCall& c, const Values& v) {
  DType t = c.outputs[0].dtype;
  if (t == DType::BF16 || t == DType::F16)
    throw NotImplemented(std::string("\"airy_ai_cpu\" not implemented for '") + hlo::dtype_name(t) + "'");
  return unary_float(b, c, v, [](Builder& b, const Value& x) { return airy_ai(b, x); });
});

}  // namespace
}  // namespace torch_tpu::ops
