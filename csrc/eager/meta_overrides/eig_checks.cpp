// linalg_eig and _linalg_eigvals: the CPU's checks in its order. The complex
// result dtype is looked up first (integer and bool input: RuntimeError
// "Unknown Complex ScalarType", where PyTorch's Python meta kernel fails with
// a KeyError), then A must be a (batch of) square matrices (RuntimeError, not
// the meta kernel's AssertionError for under 2 dims), and the CPU kernel has
// no half-precision variant (NotImplementedError; the meta kernel would type
// the results complex32). Everything else is PyTorch's meta kernel.
#include "eager/meta_overrides/registry.h"

#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

MetaOverride eig_meta(const char* name, const char* label) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    const at::Tensor& a = stack[first].toTensor();
    c10::ScalarType dt = a.scalar_type();
    TORCH_CHECK(c10::isFloatingType(dt) || c10::isComplexType(dt), "Unknown Complex ScalarType for ", dt);
    TORCH_CHECK(a.dim() >= 2, label, ": The input tensor A must have at least 2 dimensions.");
    TORCH_CHECK(a.size(-1) == a.size(-2), label, ": A must be batches of square matrices, but they are ", a.size(-2),
                " by ", a.size(-1), " matrices");
    TORCH_CHECK_NOT_IMPLEMENTED(dt == c10::kFloat || dt == c10::kDouble || dt == c10::kComplexFloat ||
                                    dt == c10::kComplexDouble,
                                "\"linalg_eig_out_cpu\" not implemented for '", c10::toString(dt), "'");
    return default_meta(name, "", stack, first);
  };
}

const MetaOverrideRegistrar registrar{
    {"aten::linalg_eig", eig_meta("aten::linalg_eig", "linalg.eig")},
    {"aten::_linalg_eigvals", eig_meta("aten::_linalg_eigvals", "linalg.eigvals")},
};

}  // namespace
}  // namespace torch_tpu::eager
