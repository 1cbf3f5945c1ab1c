// Elementwise math. Result dtype and shape come from PyTorch's meta kernel
// (call.outputs), so promotion and broadcasting match PyTorch by construction.
#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Value;
using Values = std::vector<Value>;

TORCH_TPU_LOWERING("add.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  Value other = to_type(b, operand(c, v, 1), out);
  Value alpha = to_type(b, operand(c, v, 2), out);
  return Values{b.add(to_type(b, operand(c, v, 0), out), b.multiply(other, alpha))};
});

TORCH_TPU_LOWERING("mul.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  return Values{b.multiply(to_type(b, operand(c, v, 0), out), to_type(b, operand(c, v, 1), out))};
});

TORCH_TPU_LOWERING("neg", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{b.negate(to_type(b, operand(c, v, 0), c.outputs[0]))};
});

}  // namespace
}  // namespace torch_tpu::ops
