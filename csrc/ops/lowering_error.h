// Exceptions a lowering rule throws; the executor turns them into PyTorch's:
//   std::invalid_argument -> RuntimeError (bad shapes, unsupported cases)
//   std::out_of_range     -> IndexError   (a dimension or index out of range)
//   ops::NotImplemented   -> NotImplementedError, for inputs PyTorch's own CPU
//                            kernels don't implement either (e.g. bool convolution)
#pragma once
#include <stdexcept>

namespace torch_tpu::ops {

struct NotImplemented : std::logic_error {
  using std::logic_error::logic_error;
};

// A rule met complex values without declaring that it handles them
// (TORCH_TPU_ACCEPTS_COMPLEX): the eager executor runs the op on the CPU
// instead (visibly), rather than risk a rule that drops imaginary parts.
struct NoComplexRule : NotImplemented {
  using NotImplemented::NotImplemented;
};

}  // namespace torch_tpu::ops
