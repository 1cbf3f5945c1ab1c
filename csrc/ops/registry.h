// The lowering registry: ATen op name ("add.Tensor") -> rule. Shared by the
// eager executor and the compile path. Rules register themselves from their
// family's file with TORCH_TPU_LOWERING, so adding an op touches one file.
#pragma once
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "ops/op_call.h"

namespace torch_tpu::ops {

// Emits the op's results (types must equal call.outputs) from its operands.
using LoweringRule = std::function<std::vector<hlo::Value>(
    hlo::Builder&, const OpCall&, const std::vector<hlo::Value>& operands)>;

void register_lowering(const std::string& op, LoweringRule rule);
// Rules see complex operands or results only if their op was declared here;
// others throw NoComplexRule (ops/lowering_error.h) for them.
void accept_complex(const std::string& op);
// A separate rule for calls that touch complex values (ops whose complex math
// differs from the real formula: exp, log, trig, var, norms); lives in
// ops/complex/. Real calls keep the op's main rule.
void register_complex_lowering(const std::string& op, LoweringRule rule);
const LoweringRule* find_lowering(const std::string& op);
std::vector<std::string> lowered_ops();

struct LoweringRegistrar {
  LoweringRegistrar(const char* op, LoweringRule rule) { register_lowering(op, std::move(rule)); }
};
struct ComplexLoweringRegistrar {
  ComplexLoweringRegistrar(const char* op, LoweringRule rule) { register_complex_lowering(op, std::move(rule)); }
};

}  // namespace torch_tpu::ops

namespace torch_tpu::ops {
struct ComplexAcceptor {
  explicit ComplexAcceptor(std::initializer_list<const char*> ops) {
    for (const char* op : ops) accept_complex(op);
  }
};
}  // namespace torch_tpu::ops

#define TORCH_TPU_LOWERING_CONCAT2(a, b) a##b
#define TORCH_TPU_LOWERING_CONCAT(a, b) TORCH_TPU_LOWERING_CONCAT2(a, b)
// TORCH_TPU_LOWERING("neg", [](hlo::Builder& b, const OpCall& c, const auto& v) {...});
#define TORCH_TPU_LOWERING(op, ...)                                                   \
  static ::torch_tpu::ops::LoweringRegistrar TORCH_TPU_LOWERING_CONCAT(lowering_, __COUNTER__)( \
      op, __VA_ARGS__)
// TORCH_TPU_COMPLEX_LOWERING("exp", rule): the rule for complex calls of "exp".
#define TORCH_TPU_COMPLEX_LOWERING(op, ...)                                                  \
  static ::torch_tpu::ops::ComplexLoweringRegistrar TORCH_TPU_LOWERING_CONCAT(complex_lowering_, \
                                                                              __COUNTER__)(op, __VA_ARGS__)
// TORCH_TPU_ACCEPTS_COMPLEX("add.Tensor", "mul.Tensor"): these rules compute
// complex values correctly (checked by tests with complex inputs).
#define TORCH_TPU_ACCEPTS_COMPLEX(...) \
  static ::torch_tpu::ops::ComplexAcceptor TORCH_TPU_LOWERING_CONCAT(complex_ok_, __COUNTER__)({__VA_ARGS__})
