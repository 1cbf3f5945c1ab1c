// Division and its relatives: true division, rounding division (trunc/floor),
// remainder (Python's sign: follows the divisor) and fmod (C's: follows the
// dividend). Float formulas follow the CPU kernels so the edge cases (x/0,
// inf, -0) come out the same; integer division by zero raises
// RuntimeError("ZeroDivisionError") at the next synchronization, like the CPU.
#include "ops/complex/complex_math.h"
#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

void check_divisor(Builder& b, const Value& y) {
  if (!hlo::is_float(y.type.dtype)) runtime_check(b, b.compare(y, zeros_like(b, y), "EQ"), "ZeroDivisionError");
}

// fmod for floats, C remainder for ints: both are StableHLO's remainder.
Value fmod(Builder& b, const Value& x, const Value& y) { return b.binary("remainder", x, y); }

// x mod y with the sign of y.
Value python_remainder(Builder& b, const Value& x, const Value& y) {
  Value mod = fmod(b, x, y);
  if (hlo::is_unsigned(y.type.dtype)) return mod;
  Value wrong_sign = b.compare(is_neg(b, y), is_neg(b, mod), "NE");
  Value fix = logical_and(b, not_zero(b, mod), wrong_sign);
  return b.select(fix, b.add(mod, y), mod);
}

// floor(x / y), computed like the CPU's div_floor kernels.
Value floor_divide(Builder& b, const Value& x, const Value& y) {
  DType t = x.type.dtype;
  if (!hlo::is_float(t)) {
    Value q = b.divide(x, y);
    if (hlo::is_unsigned(t)) return q;
    Value r = fmod(b, x, y);
    Value adjust = logical_and(b, not_zero(b, r), b.compare(is_neg(b, r), is_neg(b, y), "NE"));
    return b.select(adjust, b.subtract(q, b.splat_int(q.type, 1)), q);
  }
  // (x - fmod(x, y)) / y is exact-ish; step down when fmod's sign disagrees
  // with y, then round to the nearest integer to undo the division's error.
  Value one = full_like(b, x, 1), zero = zeros_like(b, x);
  Value mod = fmod(b, x, y);
  Value div = b.divide(b.subtract(x, mod), y);
  Value step = logical_and(b, not_zero(b, mod), b.compare(is_neg(b, y), is_neg(b, mod), "NE"));
  div = b.select(step, b.subtract(div, one), div);
  Value fl = b.unary("floor", div);
  fl = b.select(b.compare(b.subtract(div, fl), full_like(b, x, 0.5), "GT"), b.add(fl, one), fl);
  Value quotient = b.divide(x, y);
  Value signed_zero = b.multiply(quotient, zero);  // copysign(0, x / y) for finite x / y
  Value r = b.select(b.compare(div, zero, "EQ"), signed_zero, fl);
  return b.select(b.compare(y, zero, "EQ"), quotient, r);
}

Values divide(Builder& b, const OpCall& c, const Values& v, const std::string& mode) {
  const TensorType& out = c.outputs[0];
  if (mode.empty())
    return binary_compute(
        b, c, v, 0, 1,
        [](Builder& b, const Value& x, const Value& y) {
          return hlo::is_complex(x.type.dtype) ? complex_math::divide(b, x, y) : b.divide(x, y);
        },
        true);
  if (mode != "trunc" && mode != "floor")
    throw std::invalid_argument("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" +
                                mode + "'");
  reject_dtype(c, out.dtype == DType::Pred, mode == "trunc" ? "div_trunc_cpu" : "div_floor_cpu");
  return binary_compute(b, c, v, 0, 1, [&](Builder& b, const Value& x, const Value& y) {
    check_divisor(b, y);
    if (mode == "floor") return floor_divide(b, x, y);
    Value q = b.divide(x, y);  // integer division already truncates
    return hlo::is_float(q.type.dtype) ? trunc(b, q) : q;
  }, true);
}

std::string rounding_mode(const OpCall& c, size_t i) { return c.arg(i).is_none() ? "" : c.arg(i).s; }

// True division of complex values: complex_math::divide (rounding modes reject complex).
TORCH_TPU_ACCEPTS_COMPLEX("div.Tensor", "div.Scalar");
TORCH_TPU_LOWERING("div.Tensor", [](Builder& b, const OpCall& c, const Values& v) { return divide(b, c, v, ""); });
TORCH_TPU_LOWERING("div.Scalar", [](Builder& b, const OpCall& c, const Values& v) { return divide(b, c, v, ""); });
TORCH_TPU_LOWERING("div.Tensor_mode", [](Builder& b, const OpCall& c, const Values& v) {
  return divide(b, c, v, rounding_mode(c, 2));
});
TORCH_TPU_LOWERING("div.Scalar_mode", [](Builder& b, const OpCall& c, const Values& v) {
  return divide(b, c, v, rounding_mode(c, 2));
});
TORCH_TPU_LOWERING("floor_divide", [](Builder& b, const OpCall& c, const Values& v) {
  return divide(b, c, v, "floor");
});
TORCH_TPU_LOWERING("floor_divide.Scalar", [](Builder& b, const OpCall& c, const Values& v) {
  return divide(b, c, v, "floor");
});

Values remainder(Builder& b, const OpCall& c, const Values& v) {
  reject_dtype(c, c.outputs[0].dtype == DType::Pred, "remainder_cpu");
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) {
    check_divisor(b, y);
    return python_remainder(b, x, y);
  });
}
TORCH_TPU_LOWERING("remainder.Tensor", remainder);
TORCH_TPU_LOWERING("remainder.Scalar", remainder);
TORCH_TPU_LOWERING("remainder.Scalar_Tensor", remainder);

Values fmod_rule(Builder& b, const OpCall& c, const Values& v) {
  reject_dtype(c, c.outputs[0].dtype == DType::Pred, "fmod_cpu");
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) {
    check_divisor(b, y);
    return fmod(b, x, y);
  });
}
TORCH_TPU_LOWERING("fmod.Tensor", fmod_rule);
TORCH_TPU_LOWERING("fmod.Scalar", fmod_rule);

}  // namespace
}  // namespace torch_tpu::ops
