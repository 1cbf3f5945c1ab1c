// Python numbers the CPU's kernels convert with value.to<scalar_t>(), which
// raises "value cannot be converted to type c10::Half without overflow" for
// one out of the dtype's range (clamp_max(half, 1e10), F.pad(int8, value=1000)).
// The numbers reach a program as runtime operands, so the check runs on the
// host, per call, for the ops listed in scalar_range_checks.cpp only.
#pragma once
#include <ATen/core/function_schema.h>
#include <ATen/core/stack.h>

#include <vector>

namespace torch_tpu::eager {

struct ScalarRangeCheck {
  size_t arg;  // schema position of the Scalar (or float) argument
  int target;  // the type it is converted to (scalar_range_checks.cpp's Target)
  int skip;    // when the CPU kernel never converts it (its Skip)
};

// The checks the CPU kernel of this op (or its in-place / out= form) makes.
std::vector<ScalarRangeCheck> scalar_range_checks(const c10::FunctionSchema& schema);

// Raises as the CPU where a checked number does not fit the type the CPU
// kernel converts it to (from the first tensor argument's dtype).
void check_scalar_ranges(const std::vector<ScalarRangeCheck>& checks, const torch::jit::Stack& stack, size_t first,
                         size_t nargs);

}  // namespace torch_tpu::eager
