// mv and the triangular/LU/general solves: the CPU's rank checks (and
// exception types) where the meta kernels assert, index or divide first.
#include "eager/meta_overrides/registry.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

// mv(self, vec): the CPU reads self.size(0) first, an IndexError for a 0-d self.
std::vector<c10::IValue> mv_meta(const torch::jit::Stack& stack, size_t first) {
  TORCH_CHECK_INDEX(stack[first].toTensor().dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  return default_meta("aten::mv", "", stack, first);
}

// linalg_solve_triangular(A, B, ...) and linalg_lu_solve(LU, pivots, B, ...):
// the CPU's RuntimeErrors for operands under 2 dims (the meta kernels assert).
MetaOverride square_solve_meta(const char* name, const char* a_label, const char* b_label, size_t b_arg) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    TORCH_CHECK(stack[first].toTensor().dim() >= 2, a_label, ": The input tensor A must have at least 2 dimensions.");
    TORCH_CHECK(stack[first + b_arg].toTensor().dim() >= 2, b_label,
                ": The input tensor B must have at least 2 dimensions.");
    return default_meta(name, "", stack, first);
  };
}

// _linalg_solve_ex(A, B, ...): A needs 2 dims, B 1 (a vector right side), with
// the CPU's RuntimeErrors (the meta kernel asserts).
std::vector<c10::IValue> solve_meta(const torch::jit::Stack& stack, size_t first) {
  TORCH_CHECK(stack[first].toTensor().dim() >= 2, "linalg.solve: The input tensor A must have at least 2 dimensions.");
  TORCH_CHECK(stack[first + 1].toTensor().dim() >= 1, "linalg.solve: The input tensor B must have at least 2 dimensions.");
  return default_meta("aten::_linalg_solve_ex", "", stack, first);
}

const MetaOverrideRegistrar registrar{
    {"aten::_linalg_solve_ex", solve_meta},
    {"aten::mv", mv_meta},
    {"aten::linalg_solve_triangular",
     square_solve_meta("aten::linalg_solve_triangular", "linalg.solve_triangular", "linalg.solve_triangular", 1)},
    {"aten::linalg_lu_solve", square_solve_meta("aten::linalg_lu_solve", "torch.linalg.lu_solve", "linalg.lu_solve", 2)},
};

}  // namespace
}  // namespace torch_tpu::eager
