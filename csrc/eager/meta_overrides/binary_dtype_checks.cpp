// Binary ops whose CPU kernels have no variant for the promoted dtype (the
// CPU raises NotImplementedError naming its kernel, PyTorch's meta kernels a
// RuntimeError of their own), and add/sub's alpha and bool checks.
#include "eager/meta_overrides/registry.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

// `kernel` (the CPU kernel's name) is not implemented for bool or, unless
// `complex_ok`, complex results; otherwise PyTorch's own meta kernel.
MetaOverride cpu_kernel_dtypes_meta(const char* name, const char* overload, const char* kernel, bool complex_ok,
                                    int mode_arg = -1) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    bool floor = mode_arg < 0 || (!stack[first + mode_arg].isNone() &&
                                  stack[first + mode_arg].toStringRef() == "floor");
    if (floor) {
      c10::ScalarType dt = binary_result_type(stack, first);
      TORCH_CHECK_NOT_IMPLEMENTED(dt != c10::kBool && (complex_ok || !c10::isComplexType(dt)), "\"", kernel,
                                  "\" not implemented for '", c10::toString(dt), "'");
    }
    return default_meta(name, overload, stack, first);
  };
}

// alpha of add/sub/rsub, checked against the result dtype as the CPU's
// alpha_check does (PyTorch's meta kernels raise a ValueError or accept it).
void check_alpha(const torch::jit::Stack& stack, size_t first) {
  const c10::IValue& a = stack[first + 2];
  if (!a.isScalar() && !a.isBool() && !a.isInt() && !a.isDouble() && !a.isComplexDouble()) return;
  c10::Scalar alpha = a.toScalar();
  c10::ScalarType dt = binary_result_type(stack, first);
  TORCH_CHECK(!alpha.isBoolean() || dt == c10::kBool, "Boolean alpha only supported for Boolean results.");
  TORCH_CHECK(c10::isFloatingType(dt) || c10::isComplexType(dt) || alpha.isIntegral(true),
              "For integral input tensors, argument alpha must not be a floating point number.");
  TORCH_CHECK(c10::isComplexType(dt) || !alpha.isComplex(),
              "For non-complex input tensors, argument alpha must not be a complex number.");
}

MetaOverride add_meta(const char* name, const char* overload) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    check_alpha(stack, first);
    return default_meta(name, overload, stack, first);
  };
}

// sub(self, other, alpha): the CPU refuses bool operands before it looks at alpha.
MetaOverride sub_meta(const char* overload) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    auto is_bool = [&](size_t i) {
      const c10::IValue& v = stack[first + i];
      return v.isTensor() ? v.toTensor().scalar_type() == c10::kBool : v.isBool();
    };
    TORCH_CHECK(!(is_bool(0) && is_bool(1)),
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead.");
    TORCH_CHECK(!is_bool(0) && !is_bool(1),
                "Subtraction, the `-` operator, with a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    check_alpha(stack, first);
    return default_meta("aten::sub", overload, stack, first);
  };
}

const MetaOverrideRegistrar registrar{
    {"aten::div.Tensor_mode", cpu_kernel_dtypes_meta("aten::div", "Tensor_mode", "div_floor_cpu", false, 2)},
    {"aten::div.Scalar_mode", cpu_kernel_dtypes_meta("aten::div", "Scalar_mode", "div_floor_cpu", false, 2)},
    {"aten::floor_divide", cpu_kernel_dtypes_meta("aten::floor_divide", "", "div_floor_cpu", false)},
    {"aten::floor_divide.Scalar", cpu_kernel_dtypes_meta("aten::floor_divide", "Scalar", "div_floor_cpu", false)},
    {"aten::logaddexp", cpu_kernel_dtypes_meta("aten::logaddexp", "", "logaddexp_cpu", true)},
    {"aten::logaddexp2", cpu_kernel_dtypes_meta("aten::logaddexp2", "", "logaddexp2_cpu", false)},
    // (PyTorch's meta kernel of lcm fails on bool with a dtype RuntimeError)
    {"aten::gcd", cpu_kernel_dtypes_meta("aten::gcd", "", "gcd_cpu", false)},
    {"aten::lcm", cpu_kernel_dtypes_meta("aten::lcm", "", "lcm_cpu", false)},
    {"aten::add.Tensor", add_meta("aten::add", "Tensor")},
    {"aten::add.Scalar", add_meta("aten::add", "Scalar")},
    {"aten::rsub.Tensor", add_meta("aten::rsub", "Tensor")},
    {"aten::rsub.Scalar", add_meta("aten::rsub", "Scalar")},
    {"aten::sub.Tensor", sub_meta("Tensor")},
    {"aten::sub.Scalar", sub_meta("Scalar")},
};

}  // namespace
}  // namespace torch_tpu::eager
