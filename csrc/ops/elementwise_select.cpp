// Elementwise selection: where, masked_fill, clamp and nan_to_num. Bounds and
// fill values are runtime operands (a new clamp bound does not recompile).
#include <limits>

#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

Value mask_of(Builder& b, const OpCall& c, const Values& v, size_t i, const std::vector<int64_t>& dims,
              const char* op) {
  const Value& m = operand(c, v, i);
  if (m.type.dtype != DType::Pred)
    throw std::invalid_argument(std::string(op) + " expected a boolean condition, got " +
                                hlo::dtype_name(m.type.dtype));
  return b.broadcast_to(m, dims);
}

TORCH_TPU_ACCEPTS_COMPLEX("where.self", "masked_fill.Scalar", "masked_fill.Tensor");

TORCH_TPU_LOWERING("where.self", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value cond = mask_of(b, c, v, 0, out.dims, "where");
  return Values{b.select(cond, to_type(b, operand(c, v, 1), out), to_type(b, operand(c, v, 2), out))};
});

// masked_fill(self, mask, value): value is a Scalar or a 0-d tensor, cast to self's dtype.
Values masked_fill(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value mask = mask_of(b, c, v, 1, out.dims, "masked_fill_");
  const Value& value = operand(c, v, 2);
  if (value.type.rank() != 0)
    throw std::invalid_argument("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with " +
                                std::to_string(value.type.rank()) + " dimension(s).");
  return Values{b.select(mask, to_type(b, value, out), to_type(b, operand(c, v, 0), out))};
}
TORCH_TPU_LOWERING("masked_fill.Scalar", masked_fill);
TORCH_TPU_LOWERING("masked_fill.Tensor", masked_fill);

// NaN-propagating max/min: a NaN in x or in the bound gives NaN, like the CPU.
Value bound(Builder& b, const Value& x, const Value& limit, bool lower) {
  if (x.type.dtype == DType::Pred) return lower ? b.binary("or", x, limit) : b.binary("and", x, limit);
  Value r = lower ? b.maximum(x, limit) : b.minimum(x, limit);
  if (!hlo::is_float(x.type.dtype)) return r;
  return b.select(is_nan(b, x), x, b.select(is_nan(b, limit), limit, r));
}

// clamp(self, min, max) = min(max(self, min), max); either bound may be None
// (argument index 0 = absent). Computed in the result dtype. `scalar`: the
// Scalar overloads, whose CPU kernels (like clamp.Tensor with both bounds)
// have no bool case; one tensor bound alone runs maximum/minimum, which do.
Values clamp(Builder& b, const OpCall& c, const Values& v, size_t lo, size_t hi, bool scalar) {
  const TensorType& out = c.outputs[0];
  bool has_lo = lo && !c.arg(lo).is_none(), has_hi = hi && !c.arg(hi).is_none();
  if (!has_lo && !has_hi) throw std::invalid_argument("torch.clamp: At least one of 'min' or 'max' must not be None");
  if (out.dtype == DType::Pred && (scalar || (has_lo && has_hi))) {
    const char* kernel = has_lo && has_hi ? (scalar ? "clamp_scalar_cpu" : "clamp_cpu")
                         : has_lo         ? "clamp_min_scalar_cpu"
                                          : "clamp_max_scalar_cpu";
    not_implemented_for(kernel, out.dtype);
  }
  DType ct = compute_type(out.dtype);
  Value r = lift(b, c, v, 0, out.dtype, ct, out.dims);
  if (has_lo) r = bound(b, r, lift(b, c, v, lo, out.dtype, ct, out.dims), true);
  if (has_hi) r = bound(b, r, lift(b, c, v, hi, out.dtype, ct, out.dims), false);
  return Values{b.convert(r, out.dtype)};
}
TORCH_TPU_LOWERING("clamp", [](Builder& b, const OpCall& c, const Values& v) { return clamp(b, c, v, 1, 2, true); });
TORCH_TPU_LOWERING("clamp.Tensor", [](Builder& b, const OpCall& c, const Values& v) { return clamp(b, c, v, 1, 2, false); });
TORCH_TPU_LOWERING("clamp_min", [](Builder& b, const OpCall& c, const Values& v) { return clamp(b, c, v, 1, 0, true); });
TORCH_TPU_LOWERING("clamp_min.Tensor", [](Builder& b, const OpCall& c, const Values& v) { return clamp(b, c, v, 1, 0, false); });
TORCH_TPU_LOWERING("clamp_max", [](Builder& b, const OpCall& c, const Values& v) { return clamp(b, c, v, 0, 1, true); });
TORCH_TPU_LOWERING("clamp_max.Tensor", [](Builder& b, const OpCall& c, const Values& v) { return clamp(b, c, v, 0, 1, false); });

double largest(DType t) {
  switch (t) {
    case DType::F16: return 65504.0;
    case DType::BF16: return 3.3895313892515355e38;
    case DType::F32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}

// nan_to_num(self, nan=0, posinf=largest, neginf=lowest): the replacements
// are float arguments (structural); integer and bool tensors pass unchanged.
TORCH_TPU_LOWERING("nan_to_num", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = to_type(b, operand(c, v, 0), out);
  if (!hlo::is_float(out.dtype)) return Values{x};
  auto given = [&](size_t i, double fallback) { return c.arg(i).is_none() ? fallback : c.arg(i).d; };
  double inf = std::numeric_limits<double>::infinity();
  Value r = b.select(is_nan(b, x), full_like(b, x, given(1, 0.0)), x);
  r = b.select(b.compare(x, full_like(b, x, inf), "EQ"), full_like(b, x, given(2, largest(out.dtype))), r);
  r = b.select(b.compare(x, full_like(b, x, -inf), "EQ"), full_like(b, x, given(3, -largest(out.dtype))), r);
  return Values{r};
});

}  // namespace
}  // namespace torch_tpu::ops
