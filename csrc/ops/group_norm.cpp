// group_norm, forward and backward (native_group_norm[_backward]). The input
// [N, C, *] is viewed as [N, G, C/G, HxW]; statistics reduce the last two dims
// (f32 for half types, two-pass variance); the affine parameters are per
// channel, i.e. [G, C/G] in that view.
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

struct Shape {
  int64_t n, c, hw, g, cg;
  std::vector<int64_t> view() const { return {n, g, cg, hw}; }
};

// N, C, HxW, group at args first..first+3.
Shape shape_of(const OpCall& c, size_t first, const Value& input) {
  Shape s{c.arg(first).i, c.arg(first + 1).i, c.arg(first + 2).i, c.arg(first + 3).i, 0};
  if (s.g <= 0 || s.c % s.g != 0) throw std::invalid_argument(c.op + ": C must be divisible by group");
  if (s.n * s.c * s.hw != input.type.numel()) throw std::invalid_argument(c.op + ": N * C * HxW != input numel");
  s.cg = s.c / s.g;
  return s;
}

Value group_sum(Builder& b, const Value& x) {  // [N, G, Cg, HW] -> [N, G]
  return b.reduce({x}, {b.constant_float(x.type.dtype, 0.0)}, {2, 3},
                  [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
}

Value per_group(Builder& b, const Value& s, const Value& like) {  // [N, G] over [N, G, Cg, HW]
  return b.broadcast_in_dim(b.reshape(b.convert(s, like.type.dtype), {like.type.dims[0], like.type.dims[1]}),
                            like.type.dims, {0, 1});
}

Value per_channel(Builder& b, const Value& p, const Value& like) {  // [C] over [N, G, Cg, HW]
  Value r = b.reshape(b.convert(p, like.type.dtype), {like.type.dims[1], like.type.dims[2]});
  return b.broadcast_in_dim(r, like.type.dims, {1, 2});
}

// native_group_norm(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean [N, G], rstd [N, G])
TORCH_TPU_LOWERING("native_group_norm", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& input = operand(c, v, 0);
  Shape s = shape_of(c, 3, input);
  DType ct = compute_type(input.type.dtype);
  Value x = b.reshape(b.convert(input, ct), s.view());
  TensorType ng(ct, {s.n, s.g});
  double d = static_cast<double>(s.cg * s.hw);
  Value inv_d = b.splat_float(ng, 1.0 / (d > 0 ? d : 1));
  Value mean = b.multiply(group_sum(b, x), inv_d);
  Value xc = b.subtract(x, per_group(b, mean, x));
  Value var = b.multiply(group_sum(b, b.multiply(xc, xc)), inv_d);
  Value rstd = b.divide(b.splat_float(ng, 1.0), b.unary("sqrt", b.add(var, b.splat_float(ng, c.arg(7).d))));
  Value y = b.multiply(xc, per_group(b, rstd, x));
  if (const Value* w = optional_operand(c, v, 1)) y = b.multiply(y, per_channel(b, *w, y));
  if (const Value* bias = optional_operand(c, v, 2)) y = b.add(y, per_channel(b, *bias, y));
  const auto& o = c.outputs;
  auto as = [&](const Value& t, const TensorType& type) { return b.reshape(b.convert(t, type.dtype), type.dims); };
  return Values{as(y, o[0]), as(mean, o[1]), as(rstd, o[2])};
});

// native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW, group, output_mask)
TORCH_TPU_LOWERING("native_group_norm_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& input = operand(c, v, 1);
  Shape s = shape_of(c, 5, input);
  DType ct = compute_type(input.type.dtype);
  Value x = b.reshape(b.convert(input, ct), s.view());
  Value dy = b.reshape(b.convert(operand(c, v, 0), ct), s.view());
  Value rstd = per_group(b, operand(c, v, 3), x);
  Value xhat = b.multiply(b.subtract(x, per_group(b, operand(c, v, 2), x)), rstd);
  const Value* w = optional_operand(c, v, 4);
  Value g = w ? b.multiply(dy, per_channel(b, *w, dy)) : dy;
  TensorType ng(ct, {s.n, s.g});
  double d = static_cast<double>(s.cg * s.hw);
  Value inv_d = b.splat_float(ng, 1.0 / (d > 0 ? d : 1));
  // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) over each group
  Value mean_g = per_group(b, b.multiply(group_sum(b, g), inv_d), x);
  Value mean_gx = per_group(b, b.multiply(group_sum(b, b.multiply(g, xhat)), inv_d), x);
  Value dx = b.multiply(rstd, b.subtract(b.subtract(g, mean_g), b.multiply(xhat, mean_gx)));
  auto channel_sum = [&](const Value& t) {  // [N, G, Cg, HW] -> [G, Cg]
    return b.reduce({t}, {b.constant_float(ct, 0.0)}, {0, 3},
                    [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
  };
  const auto& o = c.outputs;
  auto as = [&](const Value& t, const TensorType& type) {
    if (type.numel() != t.type.numel()) return b.splat_int(type, 0);  // masked off, no shape to give
    return b.reshape(b.convert(t, type.dtype), type.dims);
  };
  return Values{as(dx, o[0]), as(channel_sum(b.multiply(dy, xhat)), o[1]), as(channel_sum(dy), o[2])};
});

}  // namespace
}  // namespace torch_tpu::ops
