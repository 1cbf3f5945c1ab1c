// igamma / igammac: the CPU promotes the operands as binary ops do (ints stay
// ints) and its kernel has float types only, raising NotImplementedError
// naming the kernel for integer, bool and complex results; PyTorch's meta
// kernel instead promotes ints to the default float dtype.
#include "eager/meta_overrides/registry.h"

#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

MetaOverride igamma_meta(const char* name, const char* kernel) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    c10::ScalarType dt = binary_result_type(stack, first);
    TORCH_CHECK_NOT_IMPLEMENTED(c10::isFloatingType(dt), "\"", kernel, "\" not implemented for '", c10::toString(dt),
                                "'");
    return default_meta(name, "", stack, first);
  };
}

const MetaOverrideRegistrar registrar{
    {"aten::igamma", igamma_meta("aten::igamma", "igamma_cpu")},
    {"aten::igammac", igamma_meta("aten::igammac", "igammac_cpu")},
};

}  // namespace
}  // namespace torch_tpu::eager
