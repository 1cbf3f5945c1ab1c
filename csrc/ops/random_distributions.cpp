// More random fills: cauchy_, log_normal_, geometric_. They draw their bits
// like random.cpp (Philox from stablehlo.rng_bit_generator, seeded by the
// generator's seed and offset operands) and transform uniforms as the CPU's
// formulas do. The streams differ from the CPU's: tests check statistics.
#include <cmath>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/philox_uniform.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

DType acc_type(DType t) { return t == DType::F64 ? DType::F64 : DType::F32; }

void require_float(const TensorType& t, const char* op) {
  if (!hlo::is_float(t.dtype)) throw std::invalid_argument(std::string(op) + " expects a floating point tensor");
}

// cauchy_(self, median=0, sigma=1, *, generator): median + sigma * tan(pi * (u - 1/2)).
TORCH_TPU_LOWERING("cauchy_", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  require_float(out, "cauchy_");
  TensorType at(acc_type(out.dtype), out.dims);
  Value u = philox_uniform(b, c, v, 3, out.dims, at.dtype);
  Value angle = b.multiply(b.subtract(u, b.splat_float(at, 0.5)), b.splat_float(at, M_PI));
  // sin / cos: cos(-pi/2) rounded is about -4e-8, never 0, so the result stays finite.
  Value t = b.divide(b.unary("sine", angle), b.unary("cosine", angle));
  Value x = b.add(b.splat_float(at, c.arg(1).d), b.multiply(t, b.splat_float(at, c.arg(2).d)));
  return Values{b.convert(x, out.dtype)};
});

// log_normal_(self, mean=1, std=2, *, generator): exp(mean + std * z), z standard normal by Box-Muller.
TORCH_TPU_LOWERING("log_normal_", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) not_implemented_for("log_normal_cpu", out.dtype);  // the CPU's NotImplementedError
  TensorType at(acc_type(out.dtype), out.dims);
  std::vector<int64_t> two = out.dims;
  two.insert(two.begin(), 2);
  Value u = philox_uniform(b, c, v, 3, two, at.dtype);
  std::vector<int64_t> zeros(two.size(), 0), ones(two.size(), 1), lim1 = two, start2 = zeros;
  lim1[0] = 1;
  start2[0] = 1;
  Value u1 = b.reshape(b.slice(u, zeros, lim1, ones), out.dims);
  Value u2 = b.reshape(b.slice(u, start2, two, ones), out.dims);
  Value r = b.unary("sqrt", b.multiply(b.splat_float(at, -2.0), b.unary("log", b.subtract(b.splat_float(at, 1.0), u1))));
  Value z = b.multiply(r, b.unary("cosine", b.multiply(u2, b.splat_float(at, 2.0 * M_PI))));
  Value x = b.add(b.splat_float(at, c.arg(1).d), b.multiply(z, b.splat_float(at, c.arg(2).d)));
  return Values{b.convert(b.unary("exponential", x), out.dtype)};
});

// geometric_(self, p, *, generator): ceil(log(1 - u) / log(1 - p)), at least 1
// (trials up to the first success); integer results too.
TORCH_TPU_LOWERING("geometric_", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType acc = out.dtype == DType::F64 ? DType::F64 : DType::F32;
  TensorType at(acc, out.dims);
  Value u = philox_uniform(b, c, v, 2, out.dims, acc);
  Value num = b.unary("log", b.subtract(b.splat_float(at, 1.0), u));
  Value k = b.unary("ceil", b.divide(num, b.splat_float(at, std::log1p(-c.arg(1).d))));
  return Values{b.convert(b.maximum(k, b.splat_float(at, 1.0)), out.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
