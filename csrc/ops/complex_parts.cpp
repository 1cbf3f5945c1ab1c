// Building and taking apart complex values: complex(real, imag),
// polar(abs, angle) and _conj_physical (the copy a conjugate view materializes
// through). real/imag are views (view_as_real), lowered by the view machinery.
#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

// Both parts in the component dtype of the complex result, broadcast to its shape.
std::pair<Value, Value> parts(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  // The CPU kernel takes parts of one dtype only (the meta kernel promotes).
  DType d0 = operand(c, v, 0).type.dtype, d1 = operand(c, v, 1).type.dtype;
  auto name = [](DType d) { return d == DType::F64 ? "Double" : d == DType::F16 ? "Half" : d == DType::F32 ? "Float" : "other"; };
  if (d0 != d1)
    throw std::invalid_argument(std::string("Expected object of scalar type ") + name(d0) + " but got scalar type " +
                                name(d1) + " for second argument");
  TensorType part = out.with_dtype(hlo::complex_component(out.dtype));
  return {to_type(b, operand(c, v, 0), part), to_type(b, operand(c, v, 1), part)};
}

TORCH_TPU_ACCEPTS_COMPLEX("complex", "polar", "_conj_physical");

TORCH_TPU_LOWERING("complex", [](Builder& b, const OpCall& c, const Values& v) {
  auto [re, im] = parts(b, c, v);
  return Values{b.complex(re, im)};
});

TORCH_TPU_LOWERING("polar", [](Builder& b, const OpCall& c, const Values& v) {
  auto [r, theta] = parts(b, c, v);
  return Values{b.complex(b.multiply(r, b.unary("cosine", theta)), b.multiply(r, b.unary("sine", theta)))};
});

TORCH_TPU_LOWERING("_conj_physical", [](Builder& b, const OpCall& c, const Values& v) {
  Value x = to_type(b, operand(c, v, 0), c.outputs[0]);
  if (!hlo::is_complex(x.type.dtype)) return Values{x};
  return Values{b.complex(b.real(x), b.negate(b.imag(x)))};
});

}  // namespace
}  // namespace torch_tpu::ops
