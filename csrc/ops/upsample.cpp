// upsample (F.interpolate): nearest, nearest-exact, linear/bilinear/trilinear,
// bicubic, forward and backward. Every mode is separable: along each spatial
// dimension an output position reads a few input positions ("taps") with
// weights. Taps are computed here from the static sizes with the CPU kernel's
// own formulas and float types (UpSample.h), so indices agree exactly, and
// applied with one gather per tap (scatter-add in the backward).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "ops/lowering_error.h"
#include "ops/registry.h"
#include "ops/static_index.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

namespace si = static_index;

struct Tap {
  std::vector<int64_t> index;
  std::vector<double> weight;  // empty: weight 1 (nearest)
};
using Taps = std::vector<Tap>;

std::optional<double> scale_arg(const OpCall& c, size_t i) {
  if (i >= c.args.size() || c.arg(i).is_none()) return std::nullopt;
  return c.arg(i).d;
}

template <typename T>
T scales_value(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0. ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / out;
}

template <typename T>
T pixel_scale(int64_t in, int64_t out, bool align, std::optional<double> scale) {
  if (align) return out > 1 ? static_cast<T>(in - 1) / (out - 1) : static_cast<T>(0);
  return scales_value<T>(scale, in, out);
}

template <typename T>
T source_index(T scale, int64_t dst, bool align, bool cubic) {
  if (align) return scale * dst;
  T src = scale * (dst + static_cast<T>(0.5)) - static_cast<T>(0.5);
  return !cubic && src < static_cast<T>(0) ? T(0) : src;
}

// guard_index_and_lambda: the floor index (at most in - 1) and the fraction.
template <typename T>
void floor_and_fraction(T real, int64_t in, int64_t& idx, T& lambda) {
  idx = std::min(static_cast<int64_t>(floorf(real)), in - 1);
  lambda = std::min(std::max(real - idx, static_cast<T>(0)), static_cast<T>(1));
}

// The CPU's nearest backward, and its 2-d forward, take two shortcuts
// whatever the scale (equal sizes copy, doubled sizes halve the index); its
// 1-d and 3-d forwards use a given scale as is (without one, the shortcuts
// give the same indices).
Taps nearest_taps(int64_t in, int64_t out, std::optional<double> scale, bool exact, bool shortcuts) {
  Tap t;
  float s = scales_value<float>(scale, in, out);
  for (int64_t i = 0; i < out; ++i) {
    if (exact) t.index.push_back(std::min(static_cast<int64_t>(floorf((i + 0.5) * s)), in - 1));
    else if (shortcuts && out == in) t.index.push_back(i);
    else if (shortcuts && out == 2 * in) t.index.push_back(i >> 1);
    else t.index.push_back(std::min(static_cast<int64_t>(floorf(i * s)), in - 1));
  }
  return {t};
}

template <typename T>
Taps linear_taps(int64_t in, int64_t out, bool align, std::optional<double> scale) {
  Tap t0, t1;
  T s = pixel_scale<T>(in, out, align, scale);
  for (int64_t i = 0; i < out; ++i) {
    int64_t i0 = i, i1 = i;
    T l1 = 0;
    if (out != in) {
      floor_and_fraction<T>(source_index<T>(s, i, align, false), in, i0, l1);
      i1 = i0 + (i0 < in - 1 ? 1 : 0);
    }
    t0.index.push_back(i0), t0.weight.push_back(static_cast<T>(1) - l1);
    t1.index.push_back(i1), t1.weight.push_back(l1);
  }
  return {t0, t1};
}

template <typename T>
T cubic1(T x, T a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
template <typename T>
T cubic2(T x, T a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

template <typename T>
Taps cubic_taps(int64_t in, int64_t out, bool align, std::optional<double> scale) {
  Taps taps(4);
  T s = pixel_scale<T>(in, out, align, scale);
  const T a = -0.75;
  for (int64_t i = 0; i < out; ++i) {
    int64_t idx;
    T t;
    floor_and_fraction<T>(source_index<T>(s, i, align, true), in, idx, t);
    T w[4] = {cubic2<T>(t + 1, a), cubic1<T>(t, a), cubic1<T>(1 - t, a), cubic2<T>(2 - t, a)};
    for (int k = 0; k < 4; ++k) {
      taps[k].index.push_back(std::max<int64_t>(std::min(idx - 1 + k, in - 1), 0));
      taps[k].weight.push_back(w[k]);
    }
  }
  return taps;
}

// The CPU's generic forward kernel stores weights in the input's dtype: a
// half-type forward rounds them (to nearest even, `mantissa` bits kept) before
// the f32 arithmetic; its vectorized 2-d kernel, taken for outputs with
// H + W <= 128 (or channels-last input with C > 3, which a rule cannot see),
// keeps f32 weights. 0 keeps them as computed.
double round_weight(double w, int mantissa) {
  if (mantissa == 0) return w;
  float f = static_cast<float>(w);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  int shift = 23 - mantissa;
  bits += (1u << (shift - 1)) - 1 + ((bits >> shift) & 1);
  bits &= ~((1u << shift) - 1);
  std::memcpy(&f, &bits, 4);
  return f;
}

void round_weights(Taps& taps, bool linear, int mantissa) {
  if (mantissa == 0) return;
  for (Tap& t : taps)
    for (double& w : t.weight) w = round_weight(w, mantissa);
  if (linear)  // lambda0 = 1 - lambda1, from the rounded lambda1
    for (size_t i = 0; i < taps[0].weight.size(); ++i) taps[0].weight[i] = round_weight(1.0 - taps[1].weight[i], mantissa);
}

enum class Mode { Nearest, NearestExact, Linear, Cubic };

// Taps along every spatial dimension (the last `n` of `in_dims`).
// Forward args: (self, output_size, [align_corners], scales...);
// backward args: (grad, output_size, input_size, [align_corners], scales...).
std::vector<Taps> all_taps(const OpCall& c, Mode mode, const std::vector<int64_t>& in_dims, bool backward, DType dt) {
  bool f64 = dt == DType::F64;
  int mantissa = backward ? 0 : dt == DType::BF16 ? 7 : dt == DType::F16 ? 10 : 0;
  const auto& o = c.arg(1).ints;
  if (mode == Mode::Linear && o.size() == 2 && o[0] + o[1] <= 128) mantissa = 0;
  const auto& out_size = c.arg(1).ints;
  size_t n = out_size.size();
  if (in_dims.size() != n + 2) throw std::invalid_argument(c.op + ": unexpected input rank");
  bool interp = mode == Mode::Linear || mode == Mode::Cubic;
  size_t align_i = backward ? 3 : 2;
  bool align = interp && c.arg(align_i).b;
  size_t first_scale = align_i + (interp ? 1 : 0);
  std::vector<Taps> r;
  // The CPU's bicubic backward copies the gradient when no size changes,
  // whatever the scales (its forward does apply them).
  bool same_size = true;
  for (size_t d = 0; d < n; ++d) same_size = same_size && in_dims[2 + d] == out_size[d];
  if (backward && mode == Mode::Cubic && same_size) {
    for (size_t d = 0; d < n; ++d) {
      Tap t;
      for (int64_t i = 0; i < out_size[d]; ++i) t.index.push_back(i);
      r.push_back({t});
    }
    return r;
  }
  for (size_t d = 0; d < n; ++d) {
    int64_t in = in_dims[2 + d], out = out_size[d];
    auto scale = scale_arg(c, first_scale + d);
    switch (mode) {
      case Mode::Nearest: r.push_back(nearest_taps(in, out, scale, false, backward || n == 2)); break;
      case Mode::NearestExact: r.push_back(nearest_taps(in, out, scale, true, false)); break;
      case Mode::Linear:
        r.push_back(f64 ? linear_taps<double>(in, out, align, scale) : linear_taps<float>(in, out, align, scale));
        round_weights(r.back(), true, mantissa);
        break;
      case Mode::Cubic:
        r.push_back(f64 ? cubic_taps<double>(in, out, align, scale) : cubic_taps<float>(in, out, align, scale));
        round_weights(r.back(), false, mantissa);
        break;
    }
  }
  return r;
}

// uint8 bilinear/bicubic (2-d only, as on the CPU): the CPU's separable
// fixed-point kernel. Per dimension, weights are computed in double over a
// window of interp_size taps starting at index_min (weights of taps beyond the
// edges folded into the edge taps), scaled to int16 with the largest precision
// that keeps 2 * max weight below 2^15; each output is the int32 dot product
// plus half an LSB, shifted down and clamped to [0, 255]. The last dimension is
// resampled first and the intermediate image is uint8 again; a dimension whose
// size is unchanged is skipped.
struct FixedPointTaps {
  std::vector<int64_t> index_min;
  std::vector<std::vector<double>> weight;  // [tap][output], scaled, integral
  int precision = 0;
};

double filter(double x, bool cubic) {
  x = std::fabs(x);
  if (!cubic) return x < 1.0 ? 1.0 - x : 0.0;
  const double a = -0.75;  // the CPU uses OpenCV's constant without antialiasing
  if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

FixedPointTaps fixed_point_taps(int64_t in, int64_t out, bool align, std::optional<double> scale, bool cubic) {
  const int64_t interp = cubic ? 4 : 2, support = interp / 2;
  double s = pixel_scale<double>(in, out, align, scale);
  FixedPointTaps r;
  r.weight.assign(interp, std::vector<double>(out, 0.0));
  double wt_max = 0.0;
  for (int64_t i = 0; i < out; ++i) {
    int64_t idx;
    double lambda;
    floor_and_fraction<double>(source_index<double>(s, i, align, cubic), in, idx, lambda);
    int64_t unbound_min = idx - support + 1, lo = std::max<int64_t>(unbound_min, 0);
    int64_t size = std::clamp<int64_t>(std::min(idx + support + 1, in) - lo, 0, interp);
    r.index_min.push_back(lo);
    int64_t k = 0;
    for (int64_t j = 0; j < interp; ++j) {
      double w = filter(static_cast<double>(j + 1 - support) - lambda, cubic);
      if (unbound_min + j <= 0) k = 0;
      else if (unbound_min + j >= in - 1) k = size - 1;
      r.weight[k][i] += w;
      wt_max = std::max(wt_max, r.weight[k][i]);
      ++k;
    }
  }
  for (r.precision = 0; r.precision < 22; ++r.precision)
    if (static_cast<int>(0.5 + wt_max * (1 << (r.precision + 1))) >= (1 << 15)) break;
  for (auto& tap : r.weight)
    for (double& w : tap) {
      double x = w * (1 << r.precision);
      w = x < 0 ? static_cast<int>(-0.5 + x) : static_cast<int>(0.5 + x);
    }
  return r;
}

Values forward_uint8(Builder& b, const OpCall& c, const Values& v, Mode mode) {
  Value x = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  if (out.numel() == 0 || x.type.numel() == 0) return Values{b.splat_int(out, 0)};
  bool align = c.arg(2).b;
  for (int64_t dim : {3, 2}) {
    int64_t in = x.type.dims[dim], n = out.dims[dim];
    if (in == n) continue;
    FixedPointTaps taps = fixed_point_taps(in, n, align, scale_arg(c, 3 + (dim - 2)), mode == Mode::Cubic);
    Value xi = b.convert(x, DType::I32), acc;
    for (size_t k = 0; k < taps.weight.size(); ++k) {
      std::vector<int64_t> idx;  // a tap past the edge has weight 0; read a valid index
      for (int64_t i = 0; i < n; ++i) idx.push_back(std::min<int64_t>(taps.index_min[i] + static_cast<int64_t>(k), in - 1));
      Value g = si::take(b, xi, dim, idx);
      Value w = b.broadcast_in_dim(b.convert(si::floats(b, DType::F32, taps.weight[k]), DType::I32), g.type.dims, {dim});
      g = b.multiply(g, w);
      acc = acc.name.empty() ? g : b.add(acc, g);
    }
    acc = b.add(acc, b.splat_int(acc.type, int64_t{1} << (taps.precision - 1)));
    acc = b.binary("shift_right_arithmetic", acc, b.splat_int(acc.type, taps.precision));
    acc = b.binary("minimum", b.binary("maximum", acc, b.splat_int(acc.type, 0)), b.splat_int(acc.type, 255));
    x = b.convert(acc, DType::U8);
  }
  return Values{x};
}

Values forward(Builder& b, const OpCall& c, const Values& v, Mode mode) {
  const Value& self = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  if (self.type.dtype == DType::U8 && (mode == Mode::Linear || mode == Mode::Cubic)) {
    // The CPU takes uint8 only in its 2-d fixed-point kernel; 1-d/3-d raise there.
    if (self.type.rank() != 4)
      throw NotImplemented(c.op + ": \"compute_indices_weights_linear\" not implemented for 'Byte'");
    return forward_uint8(b, c, v, mode);
  }
  auto taps = all_taps(c, mode, self.type.dims, false, self.type.dtype);
  if (out.numel() == 0 || self.type.numel() == 0) return Values{b.splat_int(out, 0)};
  bool nearest = mode == Mode::Nearest || mode == Mode::NearestExact;
  // Nearest only moves data (any dtype); interpolation computes like the CPU's opmath.
  Value x = nearest ? self : b.convert(self, compute_type(self.type.dtype));
  for (size_t d = 0; d < taps.size(); ++d) {
    int64_t dim = static_cast<int64_t>(d) + 2;
    Value acc;
    for (const Tap& t : taps[d]) {
      Value g = si::take(b, x, dim, t.index);
      if (!t.weight.empty()) g = b.multiply(g, si::weights_along(b, t.weight, dim, g));
      acc = acc.name.empty() ? g : b.add(acc, g);
    }
    x = acc;
  }
  return Values{b.convert(x, out.dtype)};
}

Values backward(Builder& b, const OpCall& c, const Values& v, Mode mode) {
  const Value& grad = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  const auto& in_dims = c.arg(2).ints;
  auto taps = all_taps(c, mode, in_dims, true, grad.type.dtype);
  if (out.numel() == 0 || grad.type.numel() == 0) return Values{b.splat_int(out, 0)};
  // Half types accumulate in f32, like the CPU's float buffer.
  Value g = b.convert(grad, compute_type(grad.type.dtype));
  for (size_t d = taps.size(); d-- > 0;) {
    int64_t dim = static_cast<int64_t>(d) + 2;
    Value acc;
    for (const Tap& t : taps[d]) {
      Value w = t.weight.empty() ? g : b.multiply(g, si::weights_along(b, t.weight, dim, g));
      Value s = si::take_add(b, w, dim, t.index, in_dims[dim]);
      acc = acc.name.empty() ? s : b.add(acc, s);
    }
    g = acc;
  }
  return Values{b.convert(g, out.dtype)};
}

#define UPSAMPLE(name, mode)                                                                          \
  TORCH_TPU_LOWERING(name, [](Builder& b, const OpCall& c, const Values& v) { return forward(b, c, v, mode); }); \
  TORCH_TPU_LOWERING(name "_backward",                                                                \
                     [](Builder& b, const OpCall& c, const Values& v) { return backward(b, c, v, mode); });

UPSAMPLE("upsample_nearest1d", Mode::Nearest)
UPSAMPLE("upsample_nearest2d", Mode::Nearest)
UPSAMPLE("upsample_nearest3d", Mode::Nearest)
UPSAMPLE("_upsample_nearest_exact1d", Mode::NearestExact)
UPSAMPLE("_upsample_nearest_exact2d", Mode::NearestExact)
UPSAMPLE("_upsample_nearest_exact3d", Mode::NearestExact)
UPSAMPLE("upsample_linear1d", Mode::Linear)
UPSAMPLE("upsample_bilinear2d", Mode::Linear)
UPSAMPLE("upsample_trilinear3d", Mode::Linear)
UPSAMPLE("upsample_bicubic2d", Mode::Cubic)

}  // namespace
}  // namespace torch_tpu::ops
