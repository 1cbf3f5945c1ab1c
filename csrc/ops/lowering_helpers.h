// Small helpers shared by lowering rules.
#pragma once
#include "hlo/builder.h"
#include "ops/lowering_error.h"
#include "ops/op_call.h"

namespace torch_tpu::ops {

// The names every rule file uses.
using hlo::Builder;
using hlo::DType;
using hlo::TensorType;
using hlo::Value;
using Values = std::vector<hlo::Value>;

// `v` converted to `type`'s dtype and broadcast to its shape (PyTorch's
// implicit promotion + broadcasting of an operand into a result).
inline hlo::Value to_type(hlo::Builder& b, const hlo::Value& v, const hlo::TensorType& type) {
  return b.broadcast_to(b.convert(v, type.dtype), type.dims);
}

// The operand value of tensor/scalar argument `i`.
inline const hlo::Value& operand(const OpCall& c, const std::vector<hlo::Value>& ops, size_t i) {
  return ops.at(c.arg(i).operand());
}

// The operand value of optional tensor argument `i`; nullptr for None.
inline const hlo::Value* optional_operand(const OpCall& c, const std::vector<hlo::Value>& ops, size_t i) {
  return c.arg(i).is_none() ? nullptr : &operand(c, ops, i);
}

}  // namespace torch_tpu::ops
