// logspace: base ** linspace on the device.
// (tril_indices / triu_indices are not lowered: they take no tensor, and the
// executor finds the device only from tensor arguments or out=.)
#include <cmath>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

// logspace.out(Scalar start, Scalar end, int steps, float base=10.0, *, out):
// base ** linspace(start, end), the first half counted up from start and the
// second down from end, start and end rounded to the result type first, as
// the CPU kernel. The CPU computes the exponents and pow in double; here they
// run in f32 for float32-or-narrower results (a TPU has no f64; the rounding
// of f32 is within float's tolerance of the double result), in f64 for
// float64 ones. An integer result takes exact integer powers where the
// exponent is an integer and the base integral (the CPU's double pow is exact
// there too), else the float pow truncated (the CPU raises float(base)).
// start/end are runtime operands; steps and base are part of the key.
TORCH_TPU_ACCEPTS_COMPLEX("logspace.out");
TORCH_TPU_LOWERING("logspace.out", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  int64_t steps = c.arg(2).i;
  double base = c.arg(3).d;
  bool cplx = hlo::is_complex(out.dtype);
  bool integral = !hlo::is_float(out.dtype) && !cplx;
  if (out.numel() == 0) return Values{b.splat_int(out, 0)};
  // Complex: the same formula in the complex type (the CPU's std::pow).
  DType acc = cplx ? out.dtype : out.dtype == DType::F64 ? DType::F64 : DType::F32;
  hlo::TensorType tt(acc, {out.numel()});  // flat: an out= of [n, 1] keeps its shape
  hlo::TensorType index_type(hlo::complex_component(acc), {out.numel()});
  if (steps == 1) {  // the CPU fills base ** start, start taken as a double
    Value e = to_type(b, operand(c, v, 0), tt);
    return Values{b.reshape(b.convert(b.binary("power", b.splat_float(tt, base), e), out.dtype), out.dims)};
  }
  Value s = to_type(b, b.convert(operand(c, v, 0), out.dtype), tt);
  Value e = to_type(b, b.convert(operand(c, v, 1), out.dtype), tt);
  Value step = b.divide(b.subtract(e, s), b.splat_int(tt, steps - 1));
  Value index = b.iota(index_type, 0), i = b.convert(index, acc);
  Value up = b.add(s, b.multiply(step, i));
  Value down = b.subtract(e, b.multiply(step, b.subtract(b.splat_int(tt, steps - 1), i)));
  Value exponent = b.select(b.compare(index, b.splat_int(index_type, steps / 2), "LT"), up, down);
  double base_used = integral ? static_cast<double>(static_cast<float>(base)) : base;
  Value result = b.convert(b.binary("power", b.splat_float(tt, base_used), exponent), out.dtype);
  if (integral && base_used == std::trunc(base_used) && std::fabs(base_used) < 9.2e18) {
    // The exponent start + (end - start) k / (steps - 1) exactly: an integer
    // when (end - start) k is a multiple of steps - 1.
    hlo::TensorType it(DType::I64, {out.numel()});
    Value si = b.convert(b.convert(operand(c, v, 0), out.dtype), DType::I64);
    Value ei = b.convert(b.convert(operand(c, v, 1), out.dtype), DType::I64);
    Value span = b.broadcast_to(b.subtract(ei, si), it.dims);
    Value k = b.iota(it, 0), den = b.splat_int(it, steps - 1);
    Value first = b.compare(k, b.splat_int(it, steps / 2), "LT");
    Value num = b.select(first, b.multiply(span, k), b.negate(b.multiply(span, b.subtract(den, k))));
    Value whole = b.compare(b.binary("remainder", num, den), b.splat_int(it, 0), "EQ");
    Value n = b.add(b.select(first, b.broadcast_to(si, it.dims), b.broadcast_to(ei, it.dims)), b.divide(num, den));
    Value exact_pow = b.binary("power", b.splat_int(it, static_cast<int64_t>(base_used)), b.maximum(n, b.splat_int(it, 0)));
    Value use = b.binary("and", whole, b.compare(n, b.splat_int(it, 0), "GE"));
    result = b.select(use, b.convert(exact_pow, out.dtype), result);
  }
  return Values{b.reshape(result, out.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
