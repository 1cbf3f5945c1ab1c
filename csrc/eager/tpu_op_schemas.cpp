// Schemas of the ops torch_tpu itself defines (torch.ops.tpu.*). They live in
// C++ so they exist before register_lowered_ops() binds their lowering rules
// (csrc/ops); meta kernels and autograd formulas are Python
// (torch_tpu/ops.py), which torch.compile's fake tensors also use.
#include <torch/library.h>

TORCH_LIBRARY(tpu, m) {
  // lhs [M, K], rhs [G, K, N] ([G, N, K] with transpose_rhs), group_sizes [G]:
  // rows of lhs in consecutive groups, row i of group g times rhs[g]; rows past
  // sum(group_sizes) are zero (jax.lax.ragged_dot).
  m.def("ragged_dot(Tensor lhs, Tensor rhs, Tensor group_sizes, bool transpose_rhs=False) -> Tensor");
  // ragged_dot's weight gradient: [G, K, N] (or [G, N, K]), group g = lhs_g^T @ grad_g.
  m.def("ragged_dot_weight_grad(Tensor lhs, Tensor grad, Tensor group_sizes, bool transpose_rhs=False) -> Tensor");
  // The inputs, unchanged, through stablehlo.optimization_barrier.
  m.def("optimization_barrier(Tensor[] tensors) -> Tensor[]");
}
