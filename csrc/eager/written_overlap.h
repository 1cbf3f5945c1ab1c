// PyTorch's aliasing rules for the tensors a call writes. Meta tensors share
// no storage, so the meta kernels cannot check them; the CPU's kernels do.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/stack.h>

#include <vector>

namespace torch_tpu::eager {

// What one op's CPU kernels require of the memory it writes, from its schema.
struct WrittenOverlapRule {
  // Its out= may not share any location with any input, not even be all of
  // one (take(x, i, out=x)): the CPU's assert_no_overlap.
  bool out_apart_from_inputs = false;
  // Arguments (tensors or tensor lists) that may not share any location with
  // the written tensor, whatever the variant: index_add_'s index and source,
  // scatter_'s index and src, linalg_cross's operands.
  std::vector<size_t> apart_args;
};

WrittenOverlapRule written_overlap_rule(const c10::FunctionSchema& schema);

// Raises the CPU's RuntimeError where a written tensor (`targets`) writes one
// location twice, or overlaps an input as `rule` forbids; other inputs may be
// the target itself but not share only some of its locations (TensorIterator's rule).
void check_written_overlap(const WrittenOverlapRule& rule, const std::vector<at::Tensor>& targets,
                           const std::vector<at::Tensor>& inputs, const torch::jit::Stack& stack, size_t first);

}  // namespace torch_tpu::eager
