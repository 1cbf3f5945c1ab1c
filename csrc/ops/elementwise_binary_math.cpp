// Binary float math the CPU has as separate kernels: fmax/fmin (NaN-ignoring),
// copysign, heaviside, logaddexp/logaddexp2, nextafter, ldexp, hypot. Same promotion as the
// arithmetic rules (elementwise_common.h): operands cast to the result dtype,
// half types computed in f32.
#include <cmath>

#include "ops/elementwise_common.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// fmax/fmin: like maximum/minimum, but a NaN loses to a number.
Values fmin_max(Builder& b, const OpCall& c, const Values& v, bool is_max) {
  return binary_compute(b, c, v, 0, 1, [is_max](Builder& b, const Value& x, const Value& y) {
    if (x.type.dtype == DType::Pred) return is_max ? b.binary("or", x, y) : b.binary("and", x, y);
    Value r = is_max ? b.maximum(x, y) : b.minimum(x, y);
    if (!hlo::is_float(x.type.dtype)) return r;
    return b.select(is_nan(b, x), y, b.select(is_nan(b, y), x, r));
  });
}
TORCH_TPU_LOWERING("fmax", [](Builder& b, const OpCall& c, const Values& v) { return fmin_max(b, c, v, true); });
TORCH_TPU_LOWERING("fmin", [](Builder& b, const OpCall& c, const Values& v) { return fmin_max(b, c, v, false); });

// copysign(x, y): |x| with the sign bit of y (so -0 and -NaN count as negative).
Value sign_bit(Builder& b, const Value& y) {
  DType bits = y.type.dtype == DType::F64 ? DType::I64 : DType::I32;
  Value w = b.convert(y, y.type.dtype == DType::F64 ? DType::F64 : DType::F32);  // exact widening
  Value i = b.bitcast_convert(w, y.type.with_dtype(bits));
  return b.compare(i, b.splat_int(i.type, 0), "LT");
}
Values copysign(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) throw std::invalid_argument("unsupported result dtype " + out.str());
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) {
    Value a = b.unary("abs", x);
    return b.select(sign_bit(b, y), b.negate(a), a);
  });
}
TORCH_TPU_LOWERING("copysign.Tensor", copysign);
TORCH_TPU_LOWERING("copysign.Scalar", copysign);

// heaviside(x, values): values where x == 0, else x > 0 (so NaN gives 0, as on the CPU).
TORCH_TPU_LOWERING("heaviside", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (operand(c, v, 0).type.dtype != operand(c, v, 1).type.dtype)
    throw std::invalid_argument("heaviside is not yet implemented for tensors with different dtypes");
  Value x = b.broadcast_to(operand(c, v, 0), out.dims), y = b.broadcast_to(operand(c, v, 1), out.dims);
  Value zero = zeros_like(b, x);
  Value one = out.dtype == DType::Pred ? b.splat_int(out, 1) : full_like(b, x, 1);
  Value r = b.select(b.compare(x, zero, "EQ"), y, b.select(b.compare(x, zero, "GT"), one, zero));
  return Values{r};
});

// log(e^x + e^y) (base 2 for logaddexp2) as max + log1p(e^-|x - y|); equal
// infinities return themselves (their difference is NaN).
Values logaddexp(Builder& b, const OpCall& c, const Values& v, bool base2) {
  const TensorType& out = c.outputs[0];
  // The CPU kernels take floats only (bools and complex values are rejected
  // by the meta kernel before this runs).
  if (!hlo::is_float(out.dtype)) not_implemented_for(base2 ? "logaddexp2_cpu" : "logaddexp_cpu", out.dtype);
  return binary_compute(b, c, v, 0, 1, [base2](Builder& b, const Value& x, const Value& y) {
    Value m = b.maximum(x, y);
    Value d = b.negate(b.unary("abs", b.subtract(x, y)));
    Value t = base2 ? b.multiply(b.unary("log_plus_one", b.binary("power", full_like(b, d, 2), d)),
                                 full_like(b, d, 1 / std::log(2.0)))
                    : b.unary("log_plus_one", b.unary("exponential", d));
    Value is_inf = b.compare(b.unary("abs", x), full_like(b, x, INFINITY), "EQ");
    Value same_inf = logical_and(b, b.compare(x, y, "EQ"), is_inf);
    return b.select(same_inf, x, b.add(m, t));
  });
}
TORCH_TPU_LOWERING("logaddexp", [](Builder& b, const OpCall& c, const Values& v) { return logaddexp(b, c, v, false); });
TORCH_TPU_LOWERING("logaddexp2", [](Builder& b, const OpCall& c, const Values& v) { return logaddexp(b, c, v, true); });

// nextafter in the result dtype itself (no f32 widening: the next
// representable bf16 is what the CPU returns).
TORCH_TPU_LOWERING("nextafter", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) not_implemented_for("nextafter_cpu", out.dtype);
  Value x = b.broadcast_to(b.convert(operand(c, v, 0), out.dtype), out.dims);
  Value y = b.broadcast_to(b.convert(operand(c, v, 1), out.dtype), out.dims);
  return Values{b.emit1("chlo.next_after", {x, y}, "", out)};
});

// ldexp(x, e) = x * 2^e. A float x with an integral e runs the CPU's own
// kernel (result in x's dtype), which has no bool case; otherwise the CPU
// computes x * pow(2.0, e), the power rounded to e's float dtype (the default
// dtype for an integral e). The power is taken in two halves so that x * 2^e
// stays finite (and nonzero) where 2^e alone would not.
TORCH_TPU_LOWERING("ldexp.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType xt = operand(c, v, 0).type.dtype, et = operand(c, v, 1).type.dtype;
  if (hlo::is_float(xt) && et == DType::Pred) not_implemented_for("ldexp_cpu_exp", et);
  if (!hlo::is_float(out.dtype)) throw std::invalid_argument("ldexp: unsupported result dtype " + out.str());
  DType ct = compute_type(out.dtype);
  Value x = lift(b, c, v, 0, out.dtype, ct, out.dims);
  Value e = b.broadcast_to(operand(c, v, 1), out.dims);
  if (!hlo::is_float(xt) || hlo::is_float(et)) {
    DType pt = hlo::is_float(et) ? et : c.default_float;
    Value ef = b.convert(e, compute_type(pt));
    Value p = b.convert(b.binary("power", full_like(b, ef, 2), ef), pt);
    return Values{b.convert(b.multiply(x, b.convert(p, ct)), out.dtype)};
  }
  Value half = b.divide(e, b.splat_int(e.type, 2));
  Value rest = b.subtract(e, half);
  auto two_to = [&](const Value& k) {
    Value kf = b.convert(k, ct);
    return b.binary("power", full_like(b, kf, 2), kf);
  };
  return Values{b.convert(b.multiply(b.multiply(x, two_to(half)), two_to(rest)), out.dtype)};
});

// hypot(x, y) = m sqrt(1 + (n/m)^2), m = max(|x|, |y|), n = min: no overflow
// or underflow in the squares; inf wins over NaN as in C's hypot.
TORCH_TPU_LOWERING("hypot", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) not_implemented_for("hypot_cpu", out.dtype);
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) {
    Value ax = b.unary("abs", x), ay = b.unary("abs", y);
    Value m = b.maximum(ax, ay), n = b.minimum(ax, ay);
    Value zero = full_like(b, m, 0), inf = full_like(b, m, INFINITY);
    Value q = b.divide(n, b.select(b.compare(m, zero, "EQ"), full_like(b, m, 1), m));
    Value r = b.multiply(m, b.unary("sqrt", b.add(full_like(b, m, 1), b.multiply(q, q))));
    r = b.select(logical_or(b, is_nan(b, ax), is_nan(b, ay)), full_like(b, m, NAN), r);
    return b.select(logical_or(b, b.compare(ax, inf, "EQ"), b.compare(ay, inf, "EQ")), inf, r);
  });
});

}  // namespace
}  // namespace torch_tpu::ops
