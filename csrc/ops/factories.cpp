// Tensor factories whose values are computed on the device.
#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::DType;
using hlo::Value;
using Values = std::vector<Value>;

// arange.start_out(start, end, step, *, out): out[i] = start + i * step.
// start and step are runtime operands; the length comes from the meta kernel,
// so a new start with the same length reuses the program.
TORCH_TPU_LOWERING("arange.start_out", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  // Accumulate like the CPU kernel (double / int64), then round once.
  DType acc = hlo::is_float(out.dtype) ? DType::F64 : DType::I64;
  hlo::TensorType t(acc, out.dims);
  Value i = b.iota(t, 0);
  Value start = to_type(b, operand(c, v, 0), t);
  Value step = to_type(b, operand(c, v, 2), t);
  return Values{b.convert(b.add(start, b.multiply(i, step)), out.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
