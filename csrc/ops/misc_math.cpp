// Small math ops with CPU-specific edge semantics: angle (real inputs),
// trace, bitwise shifts (shift counts outside [0, bits) like the CPU), renorm.
#include <cmath>
#include <stdexcept>
#include <string>

#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

Value sum_all(Builder& b, const Value& x) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x.type.rank(); ++d) all.push_back(d);
  return b.reduce({x}, {b.constant_int(x.type.dtype, 0)}, all,
                  [](Builder& r, const Values& a) { return Values{r.add(a[0], a[1])}; })[0];
}

// angle(self) for real inputs: pi where x < 0, else 0; NaN stays NaN. Ints
// and bools compute in the (float) result dtype from the meta kernel.
TORCH_TPU_LOWERING("angle", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (hlo::is_complex(operand(c, v, 0).type.dtype) || !hlo::is_float(out.dtype))
    throw std::invalid_argument("angle: complex inputs are not supported");
  Value x = b.convert(operand(c, v, 0), compute_type(out.dtype));
  Value r = b.select(is_neg(b, x), full_like(b, x, M_PI), full_like(b, x, 0));
  return Values{b.convert(b.select(is_nan(b, x), x, r), out.dtype)};
});

// trace(self): sum of the main diagonal of a matrix. Like the CPU: floats
// accumulate in their compute dtype, integers in int64 (the meta's dtype).
TORCH_TPU_ACCEPTS_COMPLEX("trace");

TORCH_TPU_LOWERING("trace", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  if (x.type.dtype == DType::Pred) not_implemented_for("trace", DType::Pred);
  if (x.type.rank() != 2) throw std::invalid_argument("trace: expected a matrix");
  int64_t rows = x.type.dims[0], cols = x.type.dims[1], m = std::min(rows, cols);
  DType acc = hlo::is_float(out.dtype) || hlo::is_complex(out.dtype) ? compute_type(out.dtype) : out.dtype;
  if (m == 0) return Values{b.convert(b.constant_int(acc, 0), out.dtype)};
  // The diagonal of the flattened matrix: every (cols + 1)-th element.
  Value diag = b.slice(b.reshape(x, {rows * cols}), {0}, {(m - 1) * (cols + 1) + 1}, {cols + 1});
  return Values{b.convert(sum_all(b, b.convert(diag, acc)), out.dtype)};
});

// Shifts. The CPU shifts a left as unsigned and gives 0 for a count outside
// [0, bits); shifting right by such a count fills with the sign bit. XLA's
// shifts read the count as unsigned and saturate the same way.
Values shift(Builder& b, const OpCall& c, const Values& v, bool left) {
  const TensorType& out = c.outputs[0];
  const char* kernel = left ? "lshift_cpu" : "rshift_cpu";
  if (!hlo::is_integral(out.dtype))
    not_implemented_for(kernel, out.dtype);
  Value x = to_type(b, operand(c, v, 0), out);
  Value n = to_type(b, operand(c, v, 1), out);
  const char* op = left ? "shift_left" : hlo::is_unsigned(out.dtype) ? "shift_right_logical" : "shift_right_arithmetic";
  return Values{b.binary(op, x, n)};
}
Values lshift(Builder& b, const OpCall& c, const Values& v) { return shift(b, c, v, true); }
Values rshift(Builder& b, const OpCall& c, const Values& v) { return shift(b, c, v, false); }
TORCH_TPU_LOWERING("bitwise_left_shift.Tensor", lshift);
TORCH_TPU_LOWERING("bitwise_left_shift.Tensor_Scalar", lshift);
TORCH_TPU_LOWERING("bitwise_left_shift.Scalar_Tensor", lshift);
TORCH_TPU_LOWERING("__lshift__.Tensor", lshift);
TORCH_TPU_LOWERING("__lshift__.Scalar", lshift);
TORCH_TPU_LOWERING("bitwise_right_shift.Tensor", rshift);
TORCH_TPU_LOWERING("bitwise_right_shift.Tensor_Scalar", rshift);
TORCH_TPU_LOWERING("bitwise_right_shift.Scalar_Tensor", rshift);
TORCH_TPU_LOWERING("__rshift__.Tensor", rshift);
TORCH_TPU_LOWERING("__rshift__.Scalar", rshift);

// renorm(self, p, dim, maxnorm): each slice along `dim` whose p-norm (over the
// other dims, p > 0 a runtime scalar) exceeds maxnorm is scaled by
// maxnorm / (norm + 1e-7). As on the CPU, the norm and factor are computed in
// the accumulate dtype, the factor rounded to self's dtype, then multiplied.
// A complex slice's norm is over the magnitudes; the factor is real.
TORCH_TPU_ACCEPTS_COMPLEX("renorm");
TORCH_TPU_LOWERING("renorm", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype) && !hlo::is_complex(out.dtype))
    throw std::invalid_argument("renorm: expected a floating point tensor");
  int64_t rank = x.type.rank(), dim = c.arg(2).i;
  if (rank == 0) throw std::invalid_argument("renorm: input needs at least 1 dimension");
  if (dim < 0) dim += rank;
  std::vector<int64_t> red;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) red.push_back(d);
  DType acc = hlo::complex_component(compute_type(out.dtype));
  Value a = b.convert(magnitude(b, b.convert(x, compute_type(out.dtype))), acc);
  Value p = b.convert(operand(c, v, 1), acc);
  auto is = [&](const Value& o, double k) { return b.compare(o, b.broadcast_to(b.constant_float(acc, k), o.type.dims), "EQ"); };
  auto reduce = [&](const Value& t, const char* op, double init) {
    return b.reduce({t}, {b.constant_float(acc, init)}, red,
                    [op](Builder& r, const Values& q) { return Values{r.binary(op, q[0], q[1])}; })[0];
  };
  for (int64_t d : red)
    if (x.type.dims[d] == 0)  // the CPU's max over nothing
      runtime_check(b, is(p, INFINITY), "linalg.vector_norm cannot compute the inf norm on the dimension " +
                                            std::to_string(d) + " because this dimension is empty");
  Value pe = b.broadcast_to(p, a.type.dims);
  Value term = b.select(is(pe, 1), a, b.select(is(pe, 2), b.multiply(a, a), b.binary("power", a, pe)));
  Value s = reduce(term, "add", 0);
  Value ps = b.broadcast_to(p, s.type.dims);
  Value root = b.binary("power", s, b.divide(b.splat_float(s.type, 1), ps));
  Value norm = b.select(is(ps, INFINITY), reduce(a, "maximum", 0),
                        b.select(is(ps, 1), s, b.select(is(ps, 2), b.unary("sqrt", s), root)));
  Value maxnorm = b.broadcast_to(b.convert(operand(c, v, 3), acc), norm.type.dims);
  Value scaled = b.divide(maxnorm, b.add(norm, b.splat_float(norm.type, 1e-7)));
  Value factor = b.select(b.compare(norm, maxnorm, "GT"), scaled, b.splat_float(norm.type, 1));
  factor = b.broadcast_in_dim(b.convert(b.convert(factor, hlo::complex_component(out.dtype)), acc), out.dims, {dim});
  Value xc = b.convert(x, compute_type(out.dtype));
  Value y = b.multiply(xc, b.convert(factor, xc.type.dtype));
  return Values{b.convert(y, out.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
