// In-place (`add_.Tensor`) and out= (`add.out`) forms of an op reuse the
// functional op's lowering rule; this finds them by schema, so a rule
// registered once serves all three forms.
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <string>

namespace torch_tpu::eager {

struct OpVariant {
  std::string rule;                     // the functional op whose rule runs
  c10::OperatorHandle functional;       // for its meta kernel
  size_t num_functional_args = 0;       // the variant's leading args that match it
};

// "add_.Tensor" -> {"add.Tensor", ...}; functional ops map to themselves.
// Computed once from the dispatcher's schemas.
const std::map<std::string, OpVariant>& op_variants();

std::string op_name(const c10::FunctionSchema& schema);  // "add.Tensor"

}  // namespace torch_tpu::eager
