// Exceptions a lowering rule throws; the executor turns them into PyTorch's:
//   std::invalid_argument -> RuntimeError (bad shapes, unsupported cases)
//   std::out_of_range     -> IndexError   (a dimension or index out of range)
//   ops::NotImplemented   -> NotImplementedError, for inputs PyTorch's own CPU
//                            kernels don't implement either (e.g. bool convolution)
#pragma once
#include <stdexcept>
#include <string>

#include "hlo/dtype.h"
#include "ops/torch_dtype_name.h"

namespace torch_tpu::ops {

struct NotImplemented : std::logic_error {
  using std::logic_error::logic_error;
};

// A case a rule does not lower: the eager executor runs the op on the CPU
// instead (visibly: warning and metrics), rather than risk a wrong value.
struct NotLowered : NotImplemented {
  using NotImplemented::NotImplemented;
};

// A rule met complex values without declaring that it handles them
// (TORCH_TPU_ACCEPTS_COMPLEX), e.g. one that would drop imaginary parts.
struct NoComplexRule : NotLowered {
  using NotLowered::NotLowered;
};


// The CPU's AT_DISPATCH failure for a dtype its kernel has no case for:
// NotImplementedError: "bitwise_and_cpu" not implemented for 'Float'.
[[noreturn]] inline void not_implemented_for(const std::string& kernel, hlo::DType t) {
  throw NotImplemented("\"" + kernel + "\" not implemented for '" + torch_dtype_name(t) + "'");
}

}  // namespace torch_tpu::ops
