// igamma / igammac: the CPU promotes the operands as binary ops do (ints stay
// ints) and its kernel has float types only, raising NotImplementedError
// naming the kernel for integer, bool and complex results; PyTorch's meta
// kernel instead promotes ints to the default float dtype. The in-place and
// out= forms check the same (their Python meta kernels would raise a cast
// RuntimeError instead).
#include "eager/meta_overrides/registry.h"

#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

MetaOverride igamma_meta(const char* name, const char* overload, const char* kernel) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    c10::ScalarType dt = binary_result_type(stack, first);
    TORCH_CHECK_NOT_IMPLEMENTED(c10::isFloatingType(dt), "\"", kernel, "\" not implemented for '", c10::toString(dt),
                                "'");
    return default_meta(name, overload, stack, first);
  };
}

const MetaOverrideRegistrar registrar{
    {"aten::igamma", igamma_meta("aten::igamma", "", "igamma_cpu")},
    {"aten::igammac", igamma_meta("aten::igammac", "", "igammac_cpu")},
    {"aten::igamma_", igamma_meta("aten::igamma_", "", "igamma_cpu")},
    {"aten::igammac_", igamma_meta("aten::igammac_", "", "igammac_cpu")},
    {"aten::igamma.out", igamma_meta("aten::igamma", "out", "igamma_cpu")},
    {"aten::igammac.out", igamma_meta("aten::igammac", "out", "igammac_cpu")},
};

}  // namespace
}  // namespace torch_tpu::eager
