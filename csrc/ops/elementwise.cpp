// Elementwise arithmetic. Result dtype and shape come from PyTorch's meta
// kernel (call.outputs), so promotion and broadcasting match PyTorch by
// construction; operands are cast to that dtype and half types are computed in
// f32, as the CPU kernels do. Division-like ops live in elementwise_division.cpp.
#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// self + alpha * other (add.Tensor/.Scalar), or self - alpha * other.
Values add_like(Builder& b, const OpCall& c, const Values& v, size_t self, size_t other, bool subtract) {
  const TensorType& out = c.outputs[0];
  if (subtract) {  // the CPU's sub_check (not made by the meta kernel for Python bools)
    bool x_bool = operand(c, v, self).type.dtype == DType::Pred, y_bool = operand(c, v, other).type.dtype == DType::Pred;
    if (x_bool && y_bool)
      throw std::invalid_argument(
          "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
          "operator instead.");
    if (x_bool || y_bool)
      throw std::invalid_argument(
          "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
          "use the `~` or `logical_not()` operator instead.");
  }
  DType ct = compute_type(out.dtype);
  Value x = lift(b, c, v, self, out.dtype, ct, out.dims);
  Value y = lift(b, c, v, other, out.dtype, ct, out.dims);
  Value alpha = lift(b, c, v, 2, out.dtype, ct, out.dims);
  Value scaled = b.multiply(y, alpha);  // bool: logical and
  return Values{b.convert(subtract ? b.subtract(x, scaled) : b.add(x, scaled), out.dtype)};
}

// "Integers to negative integer powers are not allowed." for a negative
// integral exponent when the result is integral (checked on the device).
void check_int_exponent(Builder& b, const TensorType& out, const Value& exponent) {
  if (!hlo::is_integral(out.dtype) || !hlo::is_signed_int(exponent.type.dtype)) return;
  runtime_check(b, is_neg(b, exponent), "Integers to negative integer powers are not allowed.");
}

// Complex values: these promote through Builder::convert and use StableHLO's
// complex arithmetic (the rest of the file does not take complex values).
TORCH_TPU_ACCEPTS_COMPLEX("add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "rsub.Tensor", "rsub.Scalar",
                          "mul.Tensor", "mul.Scalar", "neg", "abs");

TORCH_TPU_LOWERING("add.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  return add_like(b, c, v, 0, 1, false);
});
TORCH_TPU_LOWERING("add.Scalar", [](Builder& b, const OpCall& c, const Values& v) {
  return add_like(b, c, v, 0, 1, false);
});
TORCH_TPU_LOWERING("sub.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  return add_like(b, c, v, 0, 1, true);
});
TORCH_TPU_LOWERING("sub.Scalar", [](Builder& b, const OpCall& c, const Values& v) {
  return add_like(b, c, v, 0, 1, true);
});
// rsub(self, other, alpha) = other - alpha * self
TORCH_TPU_LOWERING("rsub.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  return add_like(b, c, v, 1, 0, true);
});
TORCH_TPU_LOWERING("rsub.Scalar", [](Builder& b, const OpCall& c, const Values& v) {
  return add_like(b, c, v, 1, 0, true);
});

Values mul(Builder& b, const OpCall& c, const Values& v) {
  return binary_compute(
      b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) { return b.multiply(x, y); }, true);
}
TORCH_TPU_LOWERING("mul.Tensor", mul);
TORCH_TPU_LOWERING("mul.Scalar", mul);

// Integer power by squaring over every exponent bit, wrapping on overflow as
// the CPU does: XLA's integer power reads only log2(bit width) exponent bits
// (2 ** 70 gave 64, not 0). Negative exponents keep StableHLO's answer, which
// is PyTorch's (0 unless the base is +-1).
Value integer_power(Builder& b, const Value& x, const Value& y) {
  int bits = hlo::dtype_bits(x.type.dtype);
  Value one = b.splat_int(x.type, 1), result = one, base = x;
  for (int i = 0; i < bits; ++i) {
    Value bit = b.binary("and", b.binary("shift_right_logical", y, b.splat_int(y.type, i)), one);
    result = b.select(not_zero(b, bit), b.multiply(result, base), result);
    base = b.multiply(base, base);
  }
  if (hlo::is_unsigned(x.type.dtype)) return result;
  return b.select(is_neg(b, y), b.binary("power", x, y), result);
}

// pow: a negative *scalar* exponent of an integer is an error (checked by the caller).
Values pow(Builder& b, const OpCall& c, const Values& v) {
  // The CPU has no bool kernel (the meta kernel would return int64).
  if (result_type(c, {0, 1}) == DType::Pred) not_implemented_for("pow", DType::Pred);
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) {
    if (!hlo::is_float(x.type.dtype) && !hlo::is_complex(x.type.dtype)) return integer_power(b, x, y);
    return b.binary("power", x, y);
  });
}
TORCH_TPU_LOWERING("pow.Tensor_Tensor", pow);
TORCH_TPU_LOWERING("pow.Scalar", pow);
TORCH_TPU_LOWERING("pow.Tensor_Scalar", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (result_type(c, {0, 1}) == DType::Pred) {
    // The CPU copies for x ** True and fills ones for x ** False (the meta
    // kernel says int64 where the CPU keeps bool; call.outputs wins).
    TensorType pred = out.with_dtype(DType::Pred);
    Value e = b.broadcast_to(operand(c, v, 1), out.dims);
    return Values{b.convert(b.binary("or", to_type(b, operand(c, v, 0), pred), logical_not(b, e)), out.dtype)};
  }
  check_int_exponent(b, out, operand(c, v, 1));
  DType dt = out.dtype;
  if (dt != DType::F32 && dt != DType::F64 && dt != DType::BF16) return pow(b, c, v);
  // The CPU's shortcuts for a scalar exponent (float, double, bfloat16; half
  // takes the plain pow): 2, 3 and -2 multiply out in the tensor's dtype,
  // bfloat16 rounding every product ((x*x)*x, 1/(x*x)); 0.5, -0.5, -1 run its
  // sqrt, rsqrt (1 / sqrt) and reciprocal kernels; the rest is pow. The
  // exponent is a runtime operand (one program for every exponent), so a
  // stablehlo.case on it runs the one branch it names: a select over all of
  // them computed pow for every element too (~20 ns each on the CPU backend;
  // an RMSNorm's x.pow(2) in eager decoding). With a constant exponent (a
  // compiled graph) XLA keeps only that branch.
  static const double kShortcuts[] = {2, 3, -2, 0.5, -0.5, -1};
  auto branch = [&c, &v, dt](Builder& rb, int which) {  // which: index into kShortcuts, or -1 for pow
    return binary_compute(rb, c, v, 0, 1, [dt, which](Builder& b, const Value& x, const Value& y) {
      auto rnd = [&](const Value& a) { return dt == DType::BF16 ? b.convert(b.convert(a, dt), x.type.dtype) : a; };
      const Value one = full_like(b, x, 1);
      switch (which) {
        case 0: return b.multiply(x, x);
        case 1: return rnd(b.multiply(rnd(b.multiply(x, x)), x));
        case 2: return b.divide(one, rnd(b.multiply(x, x)));
        case 3: return b.unary("sqrt", x);
        case 4:  // the barrier keeps XLA from rewriting 1 / sqrt into its rsqrt, which is not the CPU's
          return b.divide(one, b.opaque(b.unary("sqrt", x)));
        case 5: return b.divide(one, x);
        default: return b.binary("power", x, y);
      }
    });
  };
  // The exponent in the compute dtype, as the generic branch reads it.
  Value e = lift_scalar(b, c, v, 1, dt, compute_type(dt), {});
  TensorType i32(DType::I32, {});
  Value index = b.splat_int(i32, 0);
  for (int k = 0; k < 6; ++k)
    index = b.select(b.compare(e, full_like(b, e, kShortcuts[k]), "EQ"), b.splat_int(i32, k + 1), index);
  std::vector<std::pair<std::vector<TensorType>, hlo::RegionBody>> branches;
  for (int k = -1; k < 6; ++k)
    branches.push_back({{}, [branch, k](Builder& rb, const Values&) { return branch(rb, k); }});
  return b.emit("case", {index}, "", {out}, branches);
});

TORCH_TPU_LOWERING("atan2", [](Builder& b, const OpCall& c, const Values& v) {
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) { return b.binary("atan2", x, y); });
});

// maximum/minimum propagate NaN from either side, like the CPU.
Values min_max(Builder& b, const OpCall& c, const Values& v, bool is_max) {
  return binary_compute(b, c, v, 0, 1, [is_max](Builder& b, const Value& x, const Value& y) {
    if (x.type.dtype == DType::Pred) return is_max ? b.binary("or", x, y) : b.binary("and", x, y);
    Value r = is_max ? b.maximum(x, y) : b.minimum(x, y);
    if (!hlo::is_float(x.type.dtype)) return r;
    return b.select(is_nan(b, x), x, b.select(is_nan(b, y), y, r));
  });
}
TORCH_TPU_LOWERING("maximum", [](Builder& b, const OpCall& c, const Values& v) { return min_max(b, c, v, true); });
TORCH_TPU_LOWERING("minimum", [](Builder& b, const OpCall& c, const Values& v) { return min_max(b, c, v, false); });

// --- unary ------------------------------------------------------------------

TORCH_TPU_LOWERING("neg", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{b.negate(to_type(b, operand(c, v, 0), c.outputs[0]))};
});

TORCH_TPU_LOWERING("abs", [](Builder& b, const OpCall& c, const Values& v) {
  reject_dtype(c, c.outputs[0].dtype == DType::Pred, "abs_cpu");
  if (hlo::is_complex(operand(c, v, 0).type.dtype))  // the magnitude, a real value
    return Values{to_type(b, magnitude(b, operand(c, v, 0)), c.outputs[0])};
  Value x = to_type(b, operand(c, v, 0), c.outputs[0]);
  return Values{hlo::is_unsigned(x.type.dtype) ? x : b.unary("abs", x)};
});

// sign: -1/0/1, 0 for NaN (the CPU computes (0 < x) - (x < 0)); bool and
// unsigned values are their own sign up to 0/1.
Values sign(Builder& b, const OpCall& c, const Values& v) {
  Value x = to_type(b, operand(c, v, 0), c.outputs[0]);
  if (x.type.dtype == DType::Pred) return Values{x};
  if (hlo::is_unsigned(x.type.dtype)) return Values{b.convert(not_zero(b, x), x.type.dtype)};
  DType ct = compute_type(x.type.dtype);
  Value xc = b.convert(x, ct);
  Value zero = zeros_like(b, xc);
  Value pos = b.convert(b.compare(zero, xc, "LT"), ct), neg = b.convert(b.compare(xc, zero, "LT"), ct);
  return Values{b.convert(b.subtract(pos, neg), x.type.dtype)};
}
TORCH_TPU_LOWERING("sign", sign);
TORCH_TPU_LOWERING("sgn", sign);  // complex: ops/complex/unary_math.cpp

TORCH_TPU_LOWERING("reciprocal", [](Builder& b, const OpCall& c, const Values& v) {
  return unary_float(b, c, v, [](Builder& b, const Value& x) { return b.divide(full_like(b, x, 1), x); });
});

}  // namespace
}  // namespace torch_tpu::ops
