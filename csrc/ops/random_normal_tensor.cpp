// normal with tensor mean and/or std: normal.Tensor_float(mean, std=1),
// normal.float_Tensor(mean, std), normal.Tensor_Tensor(mean, std); the result
// is mean + std * z, z standard normal by Box-Muller on Philox bits (like
// normal_ in random.cpp). The stream differs from the CPU's: tests check
// statistics. A negative std raises, as on the CPU.
#include <cmath>
#include <stdexcept>

#include "ops/elementwise_common.h"
#include "ops/philox_uniform.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

Values normal(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) not_implemented_for("normal_kernel_cpu", out.dtype);  // the CPU's NotImplementedError
  DType acc = out.dtype == DType::F64 ? DType::F64 : DType::F32;
  TensorType at(acc, out.dims);
  std::vector<int64_t> two = out.dims;
  two.insert(two.begin(), 2);
  Value u = philox_uniform(b, c, v, 2, two, acc);
  std::vector<int64_t> zeros(two.size(), 0), ones(two.size(), 1), lim1 = two, start2 = zeros;
  lim1[0] = 1;
  start2[0] = 1;
  Value u1 = b.reshape(b.slice(u, zeros, lim1, ones), out.dims);
  Value u2 = b.reshape(b.slice(u, start2, two, ones), out.dims);
  // 1 - u1 lies in (0, 1]: log never sees 0.
  Value r = b.unary("sqrt", b.multiply(b.splat_float(at, -2.0), b.unary("log", b.subtract(b.splat_float(at, 1.0), u1))));
  Value z = b.multiply(r, b.unary("cosine", b.multiply(u2, b.splat_float(at, 2.0 * M_PI))));
  // mean / std: a tensor operand, or a float argument (structural, as the schema makes it).
  auto arg = [&](size_t i) {
    const Arg& a = c.arg(i);
    if (a.kind == Arg::Kind::Double) return b.splat_float(at, a.d);
    return b.broadcast_to(b.convert(operand(c, v, i), acc), out.dims);
  };
  Value stdv = arg(1);
  // The CPU's check is std >= 0, so a NaN std fails it too.
  if (c.arg(1).kind == Arg::Kind::Tensor)
    ew::runtime_check(b, b.unary("not", b.compare(stdv, b.splat_float(at, 0), "GE")),
                      "normal expects all elements of std >= 0.0");
  return Values{b.convert(b.add(arg(0), b.multiply(z, stdv)), out.dtype)};
}
TORCH_TPU_LOWERING("normal.Tensor_float", normal);
TORCH_TPU_LOWERING("normal.float_Tensor", normal);
TORCH_TPU_LOWERING("normal.Tensor_Tensor", normal);

}  // namespace
}  // namespace torch_tpu::ops
