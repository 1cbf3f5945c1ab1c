// Integer-only binary math: gcd and lcm (the CPU's calc_gcd: Euclid on the
// absolute values, so the result is never negative; lcm(a, b) = |a / g * b|,
// 0 when g is 0). Euclid runs on all elements at once in one stablehlo.while
// that stops when every remainder is 0 (a few dozen rounds for 64 bits).
#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

Value int_abs(Builder& b, const Value& x) { return hlo::is_unsigned(x.type.dtype) ? x : b.unary("abs", x); }

Value gcd_of(Builder& b, const Value& x, const Value& y) {
  const TensorType t = x.type;
  // The CPU's loop: while (a != 0) { c = a; a = b % a; b = c; } return b;
  // with a = |x|, b = |y|; elements whose a is 0 already keep their pair.
  Values state = b.emit(
      "while", {int_abs(b, x), int_abs(b, y)}, "", {t, t},
      {{{t, t},
        [t](Builder& r, const Values& s) { return Values{any(r, r.compare(s[0], r.splat_int(t, 0), "NE"))}; }},
       {{t, t}, [t](Builder& r, const Values& s) {
          Value running = r.compare(s[0], r.splat_int(t, 0), "NE");
          Value divisor = r.select(running, s[0], r.splat_int(t, 1));
          Value rem = r.binary("remainder", s[1], divisor);
          return Values{r.select(running, rem, s[0]), r.select(running, s[0], s[1])};
        }}});
  return state[1];
}

void integers_only(const OpCall& c, const char* kernel) { reject_dtype(c, !hlo::is_integral(c.outputs[0].dtype), kernel); }

TORCH_TPU_LOWERING("gcd", [](Builder& b, const OpCall& c, const Values& v) {
  integers_only(c, "gcd_cpu");
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) { return gcd_of(b, x, y); });
});

TORCH_TPU_LOWERING("lcm", [](Builder& b, const OpCall& c, const Values& v) {
  integers_only(c, "lcm_cpu");
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) {
    Value g = gcd_of(b, x, y);
    Value zero = b.splat_int(g.type, 0);
    Value is_zero = b.compare(g, zero, "EQ");
    Value q = b.divide(x, b.select(is_zero, b.splat_int(g.type, 1), g));
    // C++ promotes 8- and 16-bit operands to int: the CPU multiplies and
    // takes |.| in 32 bits, then truncates to the dtype.
    DType wide = hlo::dtype_bits(g.type.dtype) < 32 ? DType::I32 : g.type.dtype;
    Value product = int_abs(b, b.multiply(b.convert(q, wide), b.convert(y, wide)));
    return b.select(is_zero, zero, b.convert(product, g.type.dtype));
  });
});

}  // namespace
}  // namespace torch_tpu::ops
