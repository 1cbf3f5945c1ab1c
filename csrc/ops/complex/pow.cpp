// Complex pow, as the CPU: std::pow(x, y) = cexp(y * clog(x)) with C99's
// special values (complex_math); 1 ** y = 1 for a Scalar base of 1; and, for
// a Scalar exponent, the CPU's shortcuts: 0 -> 1, 1 -> x, 0.5 -> sqrt,
// -0.5 -> rsqrt, -1 -> 1/x, 2 -> x*x, 3 -> x*x*x, -2 -> 1/(x*x), each quotient
// the CPU's (complex_math::divide) (the scalar is a runtime operand, so each
// is a select).
#include <cmath>
#include <limits>

#include "ops/complex/complex_math.h"
#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;
using namespace complex_math;


Values pow_rule(Builder& b, const OpCall& c, const Values& v) {
  return binary_compute(b, c, v, 0, 1, [](Builder& b, const Value& x, const Value& y) { return cpow(b, x, y); });
}
TORCH_TPU_COMPLEX_LOWERING("pow.Tensor_Tensor", pow_rule);
// 1 ** y is 1 for every y, NaN included (the CPU fills ones); a base of
// True is not 1 there (Scalar::equal), so it takes cpow.
TORCH_TPU_COMPLEX_LOWERING("pow.Scalar", [](Builder& b, const OpCall& c, const Values& v) {
  Value r = pow_rule(b, c, v)[0];
  if (operand(c, v, 0).type.dtype == DType::Pred) return Values{r};
  Value base = b.broadcast_to(b.convert(operand(c, v, 0), r.type.dtype), r.type.dims);
  Value one = b.splat_float(r.type, 1);
  return Values{b.select(b.compare(base, one, "EQ"), one, r)};
});

TORCH_TPU_COMPLEX_LOWERING("pow.Tensor_Scalar", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_complex(out.dtype)) throw std::invalid_argument(c.op + ": unsupported result dtype " + out.str());
  Value x = to_type(b, operand(c, v, 0), out);
  Value e = b.broadcast_to(b.convert(operand(c, v, 1), out.dtype), out.dims);  // the exponent as scalar_t
  Value x2 = b.multiply(x, x);
  Value r = cpow(b, x, e);
  Value sqrt_x = csqrt(b, x);
  auto is = [&](double k) { return b.compare(e, b.splat_float(e.type, k), "EQ"); };
  r = b.select(is(-2), divide(b, one(b, x2), x2), r);
  r = b.select(is(3), b.multiply(x2, x), r);
  r = b.select(is(2), x2, r);
  r = b.select(is(-1), divide(b, one(b, x), x), r);
  r = b.select(is(-0.5), divide(b, one(b, x), sqrt_x), r);
  r = b.select(is(0.5), sqrt_x, r);
  r = b.select(is(1), x, r);                                     // the CPU copies x
  return Values{b.select(is(0), b.splat_float(x.type, 1), r)};  // x ** 0 is 1 for every x (the CPU fills ones)
});

}  // namespace
}  // namespace torch_tpu::ops
