// Antialiased bilinear / bicubic resizing (_upsample_bilinear2d_aa,
// _upsample_bicubic2d_aa and their backward) as the CPU's separable kernel
// (aten/src/ATen/native/cpu/UpSampleKernel.cpp): per resized dimension, the
// window (xmin, xsize) and normalized filter weights of every output index are
// computed here, on the host, with the CPU's arithmetic (in the input's float
// type; in double, then rounded to int16 fixed point with the CPU's precision,
// for uint8), and become constants of the program. The forward resizes the
// width first, then the height (a dimension whose size does not change is
// skipped), summing each window in order; uint8 sums integers exactly like
// the CPU's fixed-point kernels (UpSampleKernelAVXAntialias.h and the generic
// one agree): (2^(p-1) + sum w_k * x_k) >> p, clamped to [0, 255], so it is bit-exact.
// The backward spreads each gradient over its window: grad_in = Wh^T g Ww.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using Dims = std::vector<int64_t>;

struct AxisWeights {
  int64_t in = 0, out = 0, max_interp = 0;
  std::vector<int64_t> xmin, xsize;
  std::vector<std::vector<double>> w;  // [out][max_interp], each rounded to the kernel's type
  double wt_max = 0;
};

template <typename T>
T area_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> s) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / (out - 1) : static_cast<T>(0);
  return (s.has_value() && *s > 0.) ? static_cast<T>(1.0 / *s) : (static_cast<T>(in) / out);
}

template <typename T>
T linear_filter(T x) {
  x = std::abs(x);
  if (x < 1.0) return 1.0 - x;
  return 0.0;
}

template <typename T>
T cubic_filter(T x) {
  constexpr T a = -0.5;  // Keys' cubic, as PIL (antialias=True)
  x = std::abs(x);
  if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// HelperInterpBase::_compute_index_ranges_weights (antialias) in type T.
template <typename T>
AxisWeights axis_weights(int64_t in, int64_t out, bool align_corners, std::optional<double> opt_scale, bool cubic) {
  int interp_size = cubic ? 4 : 2;
  T scale = area_scale<T>(in, out, align_corners, opt_scale);
  T support = (scale >= 1.0) ? (interp_size * 0.5) * scale : interp_size * 0.5;
  int max_interp = static_cast<int>(std::ceil(support)) * 2 + 1;
  AxisWeights r;
  r.in = in, r.out = out, r.max_interp = max_interp;
  for (int64_t i = 0; i < out; ++i) {
    T center = scale * (i + 0.5);
    T total_w = 0.0;
    T invscale = (scale >= 1.0) ? 1.0 / scale : 1.0;
    int64_t xmin = std::max(static_cast<int64_t>(center - support + 0.5), static_cast<int64_t>(0));
    int64_t xsize = std::min(static_cast<int64_t>(center + support + 0.5), in) - xmin;
    xsize = std::clamp(xsize, static_cast<int64_t>(0), static_cast<int64_t>(max_interp));
    std::vector<T> w(max_interp, T(0));
    for (int64_t j = 0; j < xsize; ++j) {
      T v = cubic ? cubic_filter<T>((j + xmin - center + 0.5) * invscale)
                  : linear_filter<T>((j + xmin - center + 0.5) * invscale);
      w[j] = v;
      total_w += v;
    }
    if (total_w != 0.0) {
      for (int64_t j = 0; j < xsize; ++j) {
        w[j] /= total_w;
        r.wt_max = std::max(r.wt_max, static_cast<double>(w[j]));
      }
    }
    r.xmin.push_back(xmin);
    r.xsize.push_back(xsize);
    r.w.emplace_back(w.begin(), w.end());
  }
  return r;
}

// The uint8 kernels' int16 weights and their precision (bits).
unsigned int int16_weights(AxisWeights& a) {
  unsigned int p = 0;
  for (p = 0; p < 22; ++p) {
    int next = static_cast<int>(0.5 + a.wt_max * (1 << (p + 1)));
    if (next >= (1 << 15)) break;
  }
  for (auto& row : a.w)
    for (double& v : row) {
      double s = v * (1 << p);
      v = static_cast<int16_t>((s < 0) ? static_cast<int>(-0.5 + s) : static_cast<int>(0.5 + s));
    }
  return p;
}

std::string literal(DType t, double v) {
  char buf[40];
  if (t == DType::F64) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    std::snprintf(buf, sizeof(buf), "0x%016llX", static_cast<unsigned long long>(bits));
  } else if (t == DType::F32) {
    float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    std::snprintf(buf, sizeof(buf), "0x%08X", bits);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  }
  return buf;
}

// A dense constant of `dims` (row-major values).
Value dense(Builder& b, DType t, const Dims& dims, const std::vector<double>& v) {
  TensorType type(t, {int64_t(v.size())});
  std::string s;
  s.reserve(v.size() * 12);
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    if (t == DType::Pred) s += v[i] != 0 ? "true" : "false";
    else s += literal(t, v[i]);
  }
  return b.reshape(b.emit1("constant", {}, "value = dense<[" + s + "]> : " + type.str(), type), dims);
}

// x resized along `axis` with the CPU's windows: for every output index, the
// window's terms added in order (uint8: integers, fixed point, as the CPU).
Value resize_axis(Builder& b, const Value& x, int64_t axis, const AxisWeights& a, unsigned int precision) {
  const Dims& d = x.type.dims;
  int64_t rank = d.size();
  DType dt = x.type.dtype;
  bool u8 = dt == DType::U8;
  Dims perm{axis};
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis) perm.push_back(i);
  Value t = b.transpose(x, perm);
  int64_t L = d[axis], R = x.type.numel() / L, O = a.out;
  Value rows = b.reshape(t, {L, R});
  DType acc_t = u8 ? DType::I32 : dt;
  if (u8) rows = b.convert(rows, DType::I32);
  int64_t K = 0;
  for (int64_t s : a.xsize) K = std::max(K, s);
  Value acc;
  if (u8) acc = b.splat_int(TensorType(DType::I32, {O, R}), int64_t(1) << (precision - 1));
  for (int64_t k = 0; k < std::max<int64_t>(K, 1); ++k) {
    std::vector<double> idx(O), w(O), valid(O);
    for (int64_t i = 0; i < O; ++i) {
      idx[i] = std::min(a.xmin[i] + k, L - 1);
      w[i] = k < (int64_t)a.w[i].size() ? a.w[i][k] : 0.0;
      valid[i] = k < a.xsize[i];
    }
    Value iv = dense(b, DType::I64, {O, 1}, idx);
    Value g = b.emit1("gather", {rows, iv},
                      "dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                      "start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, " +
                          std::to_string(R) + ">, indices_are_sorted = false",
                      TensorType(acc_t, {O, R}));
    Value wv = b.broadcast_in_dim(dense(b, acc_t, {O}, w), {O, R}, {0});
    Value term = b.multiply(g, wv);
    Value ok = b.broadcast_in_dim(dense(b, DType::Pred, {O}, valid), {O, R}, {0});
    term = b.select(ok, term, b.splat_float(term.type, 0));
    acc = (k == 0 && !u8) ? term : b.add(acc, term);
  }
  if (u8) {
    acc = b.binary("shift_right_arithmetic", acc, b.splat_int(acc.type, precision));
    acc = b.minimum(b.maximum(acc, b.splat_int(acc.type, 0)), b.splat_int(acc.type, 255));
    acc = b.convert(acc, DType::U8);
  }
  Dims tdims{O};
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis) tdims.push_back(d[i]);
  Dims inv(rank);
  for (int64_t i = 0; i < rank; ++i) inv[perm[i]] = i;
  return b.transpose(b.reshape(acc, tdims), inv);
}

std::optional<double> opt_double(const OpCall& c, size_t i) {
  if (c.arg(i).is_none()) return std::nullopt;
  return c.arg(i).d;
}

AxisWeights weights_for(DType dt, int64_t in, int64_t out, bool align, std::optional<double> s, bool cubic) {
  if (dt == DType::F32) return axis_weights<float>(in, out, align, s, cubic);
  return axis_weights<double>(in, out, align, s, cubic);  // float64, and uint8's double weights
}

// Args: (self, output_size[2], align_corners, scales_h?, scales_w?).
Values aa_forward(Builder& b, const OpCall& c, const Values& v, bool cubic) {
  const TensorType& out = c.outputs[0];
  Value x = operand(c, v, 0);
  DType dt = x.type.dtype;
  if (dt != DType::F32 && dt != DType::F64 && dt != DType::U8)
    throw NotLowered("antialiased upsampling: float32, float64 and uint8 are lowered");
  if (out.numel() == 0) return {b.convert(b.splat_float(out, 0), out.dtype)};
  if (out.dims == x.type.dims) return {x};
  bool align = c.arg(2).b;
  std::optional<double> sh = opt_double(c, 3), sw = opt_double(c, 4);
  // width first, then height; a dimension of unchanged size is left as it is
  if (out.dims[3] != x.type.dims[3]) {
    AxisWeights a = weights_for(dt, x.type.dims[3], out.dims[3], align, sw, cubic);
    unsigned int p = dt == DType::U8 ? int16_weights(a) : 0;
    x = resize_axis(b, x, 3, a, p);
  }
  if (out.dims[2] != x.type.dims[2]) {
    AxisWeights a = weights_for(dt, x.type.dims[2], out.dims[2], align, sh, cubic);
    unsigned int p = dt == DType::U8 ? int16_weights(a) : 0;
    x = resize_axis(b, x, 2, a, p);
  }
  return {x};
}

// The dense [out, in] matrix of an axis' weights.
Value weight_matrix(Builder& b, DType dt, const AxisWeights& a) {
  std::vector<double> m(a.out * a.in, 0.0);
  for (int64_t i = 0; i < a.out; ++i)
    for (int64_t k = 0; k < a.xsize[i]; ++k) m[i * a.in + a.xmin[i] + k] = a.w[i][k];
  return dense(b, dt, {a.out, a.in}, m);
}

// Args: (grad_output, output_size[2], input_size[4], align_corners, scales_h?, scales_w?).
Values aa_backward(Builder& b, const OpCall& c, const Values& v, bool cubic) {
  const TensorType& out = c.outputs[0];
  Value g = operand(c, v, 0);
  DType dt = g.type.dtype;
  if (dt != DType::F32 && dt != DType::F64)
    throw NotLowered("antialiased upsampling backward: float32 and float64 are lowered");
  if (out.numel() == 0 || g.type.numel() == 0) return {b.splat_float(out, 0)};
  bool align = c.arg(3).b;
  std::optional<double> sh = opt_double(c, 4), sw = opt_double(c, 5);
  int64_t N = out.dims[0], C = out.dims[1], H = out.dims[2], W = out.dims[3];
  int64_t OH = g.type.dims[2], OW = g.type.dims[3];
  AxisWeights ah = weights_for(dt, H, OH, align, sh, cubic), aw = weights_for(dt, W, OW, align, sw, cubic);
  Value wh = weight_matrix(b, dt, ah), ww = weight_matrix(b, dt, aw);  // [OH, H], [OW, W]
  std::string prec = precision_config(c.matmul_precision, dt);
  // t[n, c, oh, w] = sum_ow g[n, c, oh, ow] * ww[ow, w]
  Value t = b.emit1("dot_general", {g, ww},
                    "dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [3], "
                    "rhs_contracting_dimensions = [0]>" + prec,
                    TensorType(dt, {N, C, OH, W}));
  // r[h, n, c, w] = sum_oh wh[oh, h] * t[n, c, oh, w]
  Value r = b.emit1("dot_general", {wh, t},
                    "dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], "
                    "rhs_contracting_dimensions = [2]>" + prec,
                    TensorType(dt, {H, N, C, W}));
  return {b.transpose(r, {1, 2, 0, 3})};
}

TORCH_TPU_LOWERING("_upsample_bilinear2d_aa", [](Builder& b, const OpCall& c, const Values& v) {
  return aa_forward(b, c, v, false);
});
TORCH_TPU_LOWERING("_upsample_bicubic2d_aa", [](Builder& b, const OpCall& c, const Values& v) {
  return aa_forward(b, c, v, true);
});
TORCH_TPU_LOWERING("_upsample_bilinear2d_aa_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return aa_backward(b, c, v, false);
});
TORCH_TPU_LOWERING("_upsample_bicubic2d_aa_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return aa_backward(b, c, v, true);
});

}  // namespace
}  // namespace torch_tpu::ops
