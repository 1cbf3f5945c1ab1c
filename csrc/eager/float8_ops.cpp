#include "eager/float8_ops.h"

#include <c10/util/Exception.h>

#include <string>
#include <unordered_set>

namespace torch_tpu::eager {
namespace {

bool is_float8(c10::ScalarType t) { return t == c10::kFloat8_e4m3fn || t == c10::kFloat8_e5m2; }

// The first float8 dtype among the tensor arguments, or Undefined.
c10::ScalarType float8_argument(const torch::jit::Stack& stack, size_t first) {
  for (size_t i = first; i < stack.size(); ++i) {
    const c10::IValue& v = stack[i];
    if (v.isTensor()) {
      if (v.toTensor().defined() && is_float8(v.toTensor().scalar_type())) return v.toTensor().scalar_type();
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList().vec())
        if (t.defined() && is_float8(t.scalar_type())) return t.scalar_type();
    }
  }
  return c10::ScalarType::Undefined;
}

}  // namespace

void check_float8_support(const c10::FunctionSchema& schema, const torch::jit::Stack& stack, size_t first) {
  c10::ScalarType t = float8_argument(stack, first);
  if (t == c10::ScalarType::Undefined) return;
  static const std::unordered_set<std::string> supported = {
      "aten::_to_copy", "aten::copy_", "aten::clone", "aten::cat", "aten::fill_", "aten::zero_",
      "aten::index_select", "aten::index", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_",
      "aten::where", "aten::eq", "aten::ne", "aten::flip", "aten::roll", "aten::abs", "aten::repeat",
      "aten::constant_pad_nd", "aten::isnan", "aten::_scaled_mm", "aten::view_as_real"};
  TORCH_CHECK_NOT_IMPLEMENTED(supported.count(schema.name()), "\"", schema.name(), "\" not implemented for '",
                              c10::toString(t), "' (the CPU runs only casts, copies, selection, comparisons and "
                              "_scaled_mm on float8; cast to a wider float first)");
}

}  // namespace torch_tpu::eager
