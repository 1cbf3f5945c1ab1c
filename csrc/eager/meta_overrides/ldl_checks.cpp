// linalg_ldl_factor_ex and linalg_ldl_solve: the CPU's RuntimeError for an
// LD / A under 2 dims (PyTorch's Python meta kernels raise AssertionError
// there); everything else is PyTorch's meta kernel.
#include "eager/meta_overrides/registry.h"

#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

MetaOverride needs_matrix(const char* name, const char* label) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    TORCH_CHECK(stack[first].toTensor().dim() >= 2, label, ": The input tensor A must have at least 2 dimensions.");
    return default_meta(name, "", stack, first);
  };
}

const MetaOverrideRegistrar registrar{
    {"aten::linalg_ldl_factor_ex", needs_matrix("aten::linalg_ldl_factor_ex", "torch.linalg.ldl_factor_ex")},
    {"aten::linalg_ldl_solve", needs_matrix("aten::linalg_ldl_solve", "torch.linalg.ldl_solve")},
};

}  // namespace
}  // namespace torch_tpu::eager
