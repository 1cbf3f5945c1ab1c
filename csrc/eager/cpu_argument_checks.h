// Argument checks that only the CPU kernel makes, not PyTorch's meta kernel
// (which is what a program build runs): normal_'s std >= 0, random_'s
// from < to, cummax's dim of a 0-d tensor, softshrink's lambd range. The
// CPU kernel itself is asked, on one-element CPU stand-ins for the tensors
// (cpu_argument_checks.cpp).
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace torch_tpu::eager {

enum class CpuArgumentCheck {
  kNone,
  kAtBuild,    // the checked arguments are in the program key: asked when a program is built
  kEveryCall,  // a checked number is a runtime operand: asked on every call
};

struct CpuArgumentChecks {
  CpuArgumentCheck when = CpuArgumentCheck::kNone;
  int only_if = -1;  // schema position of a bool argument the check needs true, or -1
  // Whether this call is asked (a kEveryCall op whose check cannot fire is not).
  bool asked_now(CpuArgumentCheck at, const torch::jit::Stack& stack, size_t first) const {
    return when == at && (only_if < 0 || stack[first + only_if].toBool());
  }
};

CpuArgumentChecks cpu_argument_checks_of(const c10::FunctionSchema& schema);

// Raises what the CPU kernel raises for these arguments (but not its
// NotImplementedError for a dtype it lacks, which tpu computes).
void check_arguments_like_cpu(const c10::OperatorHandle& handle, const torch::jit::Stack& stack, size_t first,
                              size_t nargs);

}  // namespace torch_tpu::eager
