// softmax / log_softmax and their backward ops. Numerically stable (the row
// maximum is subtracted before exp); half types compute in f32 like the CPU.
#include <limits>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// The softmax dimension of `c.arg(i)` for a tensor of rank `rank` (0-d acts as 1-d).
int64_t softmax_dim(const OpCall& c, size_t i, int64_t rank) {
  int64_t n = rank == 0 ? 1 : rank;
  int64_t d = c.arg(i).i;
  if (d < -n || d >= n) throw std::invalid_argument(c.op + ": dimension out of range");
  return d < 0 ? d + n : d;
}

// Reduces `x` over `dim` with `op` and broadcasts the result back to x's shape.
Value reduce_keep(Builder& b, const Value& x, int64_t dim, const std::string& op, double init) {
  Value r = b.reduce({x}, {b.constant_float(x.type.dtype, init)}, {dim},
                     [op](Builder& rb, const Values& a) { return Values{rb.binary(op, a[0], a[1])}; })[0];
  std::vector<int64_t> map;
  for (int64_t i = 0; i < x.type.rank(); ++i)
    if (i != dim) map.push_back(i);
  return b.broadcast_in_dim(r, x.type.dims, map);
}

// `v` in the compute type of `dtype`, with 0-d lifted to 1-d.
Value lift(Builder& b, const Value& v, DType dtype) {
  Value x = b.convert(v, compute_type(dtype));
  return x.type.rank() == 0 ? b.reshape(x, {1}) : x;
}

Value finish(Builder& b, const Value& r, const TensorType& out) {
  return b.reshape(b.convert(r, out.dtype), out.dims);
}

void require_float(const OpCall& c, DType t) {
  if (!hlo::is_float(t))
    not_implemented_for(c.op.substr(0, c.op.find('.')), t);  // NotImplementedError, as the CPU
}

// x - max(x), the shifted logits both forward ops start from.
Value shifted(Builder& b, const Value& x, int64_t dim) {
  return b.subtract(x, reduce_keep(b, x, dim, "maximum", -std::numeric_limits<double>::infinity()));
}

TORCH_TPU_LOWERING("_softmax", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  const Value& self = operand(c, v, 0);
  require_float(c, self.type.dtype);
  int64_t dim = softmax_dim(c, 1, self.type.rank());
  Value e = b.unary("exponential", shifted(b, lift(b, self, out.dtype), dim));
  Value sum = reduce_keep(b, e, dim, "add", 0.0);
  return Values{finish(b, b.divide(e, sum), out)};
});

TORCH_TPU_LOWERING("_log_softmax", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  const Value& self = operand(c, v, 0);
  require_float(c, self.type.dtype);
  int64_t dim = softmax_dim(c, 1, self.type.rank());
  Value s = shifted(b, lift(b, self, out.dtype), dim);
  Value lse = b.unary("log", reduce_keep(b, b.unary("exponential", s), dim, "add", 0.0));
  return Values{finish(b, b.subtract(s, lse), out)};
});

// grad_input = output * (grad - sum(grad * output)).
TORCH_TPU_LOWERING("_softmax_backward_data", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  require_float(c, out.dtype);
  DType ct = compute_type(out.dtype);
  Value g = lift(b, operand(c, v, 0), ct), y = lift(b, operand(c, v, 1), ct);
  int64_t dim = softmax_dim(c, 2, operand(c, v, 0).type.rank());
  Value dot = reduce_keep(b, b.multiply(g, y), dim, "add", 0.0);
  return Values{finish(b, b.multiply(y, b.subtract(g, dot)), out)};
});

// grad_input = grad - exp(output) * sum(grad).
TORCH_TPU_LOWERING("_log_softmax_backward_data", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  require_float(c, out.dtype);
  DType ct = compute_type(out.dtype);
  Value g = lift(b, operand(c, v, 0), ct), y = lift(b, operand(c, v, 1), ct);
  int64_t dim = softmax_dim(c, 2, operand(c, v, 0).type.rank());
  Value sum = reduce_keep(b, g, dim, "add", 0.0);
  return Values{finish(b, b.subtract(g, b.multiply(b.unary("exponential", y), sum)), out)};
});

}  // namespace
}  // namespace torch_tpu::ops
