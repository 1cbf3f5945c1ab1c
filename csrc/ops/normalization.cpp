// layer_norm, forward and backward. Statistics are computed in f32 for half
// types (like the CPU) with a two-pass variance, as accurate as the CPU's
// Welford update. (rms_norm is CompositeImplicitAutograd: pow/mean/rsqrt/mul.)
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

std::vector<int64_t> range(int64_t lo, int64_t hi) {
  std::vector<int64_t> r;
  for (int64_t i = lo; i < hi; ++i) r.push_back(i);
  return r;
}

// Sum of `x` over `dims`, broadcast back to x's shape when `keep`.
Value sum(Builder& b, const Value& x, const std::vector<int64_t>& dims, bool keep) {
  Value r = b.reduce({x}, {b.constant_float(x.type.dtype, 0.0)}, dims,
                     [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
  if (!keep) return r;
  std::vector<int64_t> map;
  for (int64_t i = 0; i < x.type.rank(); ++i) {
    bool reduced = false;
    for (int64_t d : dims) reduced |= d == i;
    if (!reduced) map.push_back(i);
  }
  return b.broadcast_in_dim(r, x.type.dims, map);
}

// The first normalized dimension of `input` for `normalized_shape` (argument i).
int64_t norm_axis(const OpCall& c, size_t i, const Value& input) {
  const auto& shape = c.arg(i).ints;
  int64_t axis = input.type.rank() - static_cast<int64_t>(shape.size());
  if (axis < 0) throw std::invalid_argument(c.op + ": input rank below normalized_shape");
  for (size_t k = 0; k < shape.size(); ++k)
    if (input.type.dims[axis + k] != shape[k])
      throw std::invalid_argument(c.op + ": input shape does not end with normalized_shape");
  return axis;
}

// An affine parameter (normalized_shape) in like's dtype, broadcast over like.
Value param(Builder& b, const Value& p, const Value& like) {
  return b.broadcast_to(b.convert(p, like.type.dtype), like.type.dims);
}

// Broadcasts a per-row statistic `s` (shape rows or rows + [1, ...]) back over `like`.
Value expand(Builder& b, const Value& s, const Value& like, int64_t axis) {
  std::vector<int64_t> rows(like.type.dims.begin(), like.type.dims.begin() + axis);
  return b.broadcast_in_dim(b.reshape(b.convert(s, like.type.dtype), rows), like.type.dims, range(0, axis));
}

// native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd)
TORCH_TPU_LOWERING("native_layer_norm", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& input = operand(c, v, 0);
  int64_t axis = norm_axis(c, 1, input);
  int64_t rank = input.type.rank();
  Value x = b.convert(input, compute_type(input.type.dtype));
  int64_t n = 1;
  for (int64_t d = axis; d < rank; ++d) n *= x.type.dims[d];
  auto dims = range(axis, rank);
  std::vector<int64_t> rows(x.type.dims.begin(), x.type.dims.begin() + axis);
  TensorType row_t(x.type.dtype, rows);
  Value inv_n = b.splat_float(row_t, 1.0 / static_cast<double>(n ? n : 1));
  Value mean = b.multiply(sum(b, x, dims, false), inv_n);
  Value xc = b.subtract(x, expand(b, mean, x, axis));
  Value var = b.multiply(sum(b, b.multiply(xc, xc), dims, false), inv_n);
  Value rstd = b.divide(b.splat_float(row_t, 1.0), b.unary("sqrt", b.add(var, b.splat_float(row_t, c.arg(4).d))));
  // Over nothing the CPU's mean is 0 and its variance 0 / 0: rstd is NaN.
  if (n == 0) rstd = b.splat_float(row_t, std::nan(""));
  Value y = b.multiply(xc, expand(b, rstd, x, axis));
  if (const Value* w = optional_operand(c, v, 2)) y = b.multiply(y, param(b, *w, y));
  if (const Value* bias = optional_operand(c, v, 3)) y = b.add(y, param(b, *bias, y));
  auto as = [&](const Value& s, const TensorType& t) { return b.reshape(b.convert(s, t.dtype), t.dims); };
  return Values{b.convert(y, c.outputs[0].dtype), as(mean, c.outputs[1]), as(rstd, c.outputs[2])};
});

// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
//                            weight?, bias?, output_mask) -> (d_input, d_weight, d_bias)
TORCH_TPU_LOWERING("native_layer_norm_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& input = operand(c, v, 1);
  int64_t axis = norm_axis(c, 2, input);
  int64_t rank = input.type.rank();
  DType ct = compute_type(input.type.dtype);
  Value x = b.convert(input, ct);
  Value dy = b.convert(operand(c, v, 0), ct);
  Value mean = expand(b, operand(c, v, 3), x, axis);
  Value rstd = expand(b, operand(c, v, 4), x, axis);
  Value xhat = b.multiply(b.subtract(x, mean), rstd);
  const Value* w = optional_operand(c, v, 5);
  Value g = w ? b.multiply(dy, param(b, *w, dy)) : dy;
  int64_t n = 1;
  for (int64_t d = axis; d < rank; ++d) n *= x.type.dims[d];
  auto norm_dims = range(axis, rank), batch_dims = range(0, axis);
  // d_input = rstd / n * (n * g - sum(g) - xhat * sum(g * xhat))
  Value nn = b.splat_float(x.type, static_cast<double>(n));
  Value inner = b.subtract(b.subtract(b.multiply(nn, g), sum(b, g, norm_dims, true)),
                           b.multiply(xhat, sum(b, b.multiply(g, xhat), norm_dims, true)));
  Value scale = b.divide(rstd, b.splat_float(x.type, static_cast<double>(n ? n : 1)));
  Values r{b.convert(b.multiply(scale, inner), c.outputs[0].dtype)};
  const std::vector<int64_t>& normalized_shape = c.arg(2).ints;
  for (size_t o = 1; o < c.outputs.size(); ++o) {
    Value src = o == 1 ? b.multiply(dy, xhat) : dy;
    // An output masked off with no parameter to shape it (no weight or bias): placeholder.
    if (c.outputs[o].dims != normalized_shape) {
      r.push_back(b.splat_int(c.outputs[o], 0));
      continue;
    }
    r.push_back(b.reshape(b.convert(sum(b, src, batch_dims, false), c.outputs[o].dtype), c.outputs[o].dims));
  }
  return r;
});

}  // namespace
}  // namespace torch_tpu::ops
