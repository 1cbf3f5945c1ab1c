// logspace: base ** linspace on the device.
// (tril_indices / triu_indices are not lowered: they take no tensor, and the
// executor finds the device only from tensor arguments or out=.)
#include <cmath>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

// logspace.out(Scalar start, Scalar end, int steps, float base=10.0, *, out):
// base ** linspace(start, end), with the CPU kernel's arithmetic: start and
// end rounded to the result type, exponents in double (the first half counted
// up from start, the second down from end), pow in double (an integer result
// raises the base rounded to float), one rounding to the result at the end.
// start/end are runtime operands; steps and base are part of the key.
TORCH_TPU_LOWERING("logspace.out", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  int64_t steps = c.arg(2).i;
  double base = c.arg(3).d;
  bool integral = !hlo::is_float(out.dtype);
  if (out.numel() == 0) return Values{b.splat_int(out, 0)};
  hlo::TensorType tt(DType::F64, {out.numel()});  // flat: an out= of [n, 1] keeps its shape
  if (steps == 1) {  // the CPU fills base ** start, start taken as a double
    Value e = to_type(b, operand(c, v, 0), tt);
    return Values{b.reshape(b.convert(b.binary("power", b.splat_float(tt, base), e), out.dtype), out.dims)};
  }
  Value s = to_type(b, b.convert(operand(c, v, 0), out.dtype), tt);
  Value e = to_type(b, b.convert(operand(c, v, 1), out.dtype), tt);
  Value step = b.divide(b.subtract(e, s), b.splat_int(tt, steps - 1));
  Value i = b.iota(tt, 0);
  Value up = b.add(s, b.multiply(step, i));
  Value down = b.subtract(e, b.multiply(step, b.subtract(b.splat_int(tt, steps - 1), i)));
  Value exponent = b.select(b.compare(i, b.splat_int(tt, steps / 2), "LT"), up, down);
  double base_used = integral ? static_cast<double>(static_cast<float>(base)) : base;
  return Values{b.reshape(b.convert(b.binary("power", b.splat_float(tt, base_used), exponent), out.dtype), out.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
