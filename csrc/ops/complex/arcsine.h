// The real and imaginary parts of asin and acos for a first-quadrant z = x + iy
// (x, y >= 0, finite, |z| below the callers' `big`), by Hull, Fairgrieve and
// Tang's algorithm ("Implementing the complex arcsine and arccosine functions
// using exception handling", 1997): accurate to a few ulps everywhere,
// the branch points +-1 included, where log(iz + sqrt(1 - z^2)) and its
// kin cancel (acos(0.9994 + 2e-17i) came out with an imaginary part 4000
// times too large in complex64).
#pragma once
#include <cmath>
#include <limits>

#include "ops/complex/complex_math.h"

namespace torch_tpu::ops::complex_math {

struct Arcsine {
  Value asin_re, acos_re, im;  // asin z = asin_re + i im, acos z = acos_re - i im
};

inline Arcsine arcsine_first_quadrant(Builder& b, const Value& x, const Value& y) {
  using ew::full_like;
  using ew::logical_and;
  using ew::logical_not;
  const bool f64 = x.type.dtype == DType::F64;
  // below it y^2 underflows (4 sqrt(smallest normal))
  const double safe_min = 4 * std::sqrt(f64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min());
  auto k = [&](double v) { return full_like(b, x, v); };
  auto sqrt = [&](const Value& v) { return b.unary("sqrt", v); };
  auto atan2 = [&](const Value& p, const Value& q) { return b.binary("atan2", p, q); };
  auto half = [&](const Value& v) { return b.multiply(k(0.5), v); };
  auto le = [&](const Value& p, const Value& q) { return b.compare(p, q, "LE"); };
  auto lt = [&](const Value& p, const Value& q) { return b.compare(p, q, "LT"); };

  Value xp1 = b.add(x, k(1)), xm1 = b.subtract(x, k(1)), omx = b.subtract(k(1), x);
  Value y2 = b.multiply(y, y);
  Value r = sqrt(b.add(b.multiply(xp1, xp1), y2)), s = sqrt(b.add(b.multiply(xm1, xm1), y2));
  Value a = half(b.add(r, s));  // (|z + 1| + |z - 1|) / 2 >= 1
  Value bb = b.divide(x, a);    // in [0, 1]
  Value apx = b.add(a, x), rxp1 = b.add(r, xp1);
  Value x_le_1 = le(x, k(1));

  // the real parts: asin(B) and acos(B) where B is well away from 1, else
  // atan2 of the pieces of 1 - B^2 computed without cancelling
  Value one_minus_b2 = sqrt(b.multiply(b.subtract(k(1), bb), b.add(k(1), bb)));
  Value inside = sqrt(half(b.multiply(apx, b.add(b.divide(y2, rxp1), b.add(s, omx)))));  // x <= 1
  Value outside = b.multiply(y, sqrt(half(b.add(b.divide(apx, rxp1), b.divide(apx, b.add(s, xm1))))));  // x > 1
  Value d = b.select(x_le_1, inside, outside);
  Value b_small = le(bb, k(0.6417));
  Value asin_re = b.select(b_small, atan2(bb, one_minus_b2), atan2(x, d));
  Value acos_re = b.select(b_small, atan2(one_minus_b2, bb), atan2(d, x));

  // the imaginary part, log(A + sqrt(A^2 - 1)), with A - 1 computed without cancelling near A = 1
  Value am1 = half(b.add(b.divide(y2, rxp1), b.select(lt(x, k(1)), b.divide(y2, b.add(s, omx)), b.add(s, xm1))));
  Value im_near = b.unary("log_plus_one", b.add(am1, sqrt(b.multiply(am1, b.add(a, k(1))))));
  Value im_far = b.unary("log", b.add(a, sqrt(b.subtract(b.multiply(a, a), k(1)))));
  Value im = b.select(le(a, k(1.5)), im_near, im_far);

  // y so small that y^2 vanishes: the first terms of the series in y
  Value tiny = lt(y, k(safe_min));
  // Hull et al.'s y <= eps |x - 1| holds for a tiny y wherever x != 1
  Value at_one = b.compare(x, k(1), "EQ");
  Value below = lt(x, k(1));
  Value w = sqrt(b.select(below, b.multiply(omx, xp1), b.multiply(xm1, xp1)));  // sqrt|1 - x^2|
  Value t_asin = b.select(below, atan2(x, w), k(M_PI / 2));
  Value t_acos = b.select(below, atan2(w, x), b.divide(y, w));
  Value t_im = b.select(below, b.divide(y, w), b.unary("log_plus_one", b.add(xm1, w)));
  Value sy = sqrt(y);  // at x = 1: asin = pi/2 - sqrt y + i sqrt y
  t_asin = b.select(at_one, b.subtract(k(M_PI / 2), sy), t_asin);
  t_acos = b.select(at_one, sy, t_acos);
  t_im = b.select(at_one, sy, t_im);
  return {b.select(tiny, t_asin, asin_re), b.select(tiny, t_acos, acos_re), b.select(tiny, t_im, im)};
}

}  // namespace torch_tpu::ops::complex_math
