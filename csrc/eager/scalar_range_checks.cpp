#include "eager/scalar_range_checks.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/native/TypeProperties.h>
#include <c10/core/DefaultDtype.h>

#include <map>
#include <string>

namespace torch_tpu::eager {
namespace {

// The type the CPU kernel converts a number to, checked.
enum Target {
  kResult,       // the call's result type (clamp, add's alpha)
  kSelf,         // self's dtype, which the op keeps (masked_fill, F.pad, hardtanh)
  kSelfOpmath,   // self's compute type: float for float16/bfloat16 (addcmul's value)
  kFloatResult,  // self's dtype, or the default float for integers (logit's eps)
  kTensorsOpmath,  // the tensors' common dtype (numbers left out), float for half types (threshold_backward)
  kSelfOrDoubleIfHalfAndEmpty,  // self's dtype; double for a half type with an empty operand (addmv's beta)
};

// When the CPU kernel never gets to the conversion.
enum Skip {
  kNever,
  kNonFloatSelf,    // its kernel has no integer or complex case (NotImplementedError first)
  kIntegralSelf,    // its kernel has no integer case (complex is checked: lerp's weight)
  kComplexSelf,     // its kernel has no complex case
  kEmptyOperand,    // it returns early for an empty operand (the batched matmuls)
  kNothingPadded,   // constant_pad_nd without a positive pad copies self
  kBoolOrComplexSelf,     // its kernel has no bool or complex case
  kWideResult,      // converted only to a half or integer result (pow's exponent: float32 takes 1e39)
};

struct Checked {
  const char* arg;
  Target target;
  Skip skip = kNever;
};

// Op (without overload, in-place underscore or namespace) -> the arguments
// its CPU kernel converts with .to<T>() (found by trying each dtype against
// the CPU: tests/test_bad_input.py::test_numbers_out_of_the_dtypes_range_like_the_cpu).
const std::map<std::string, std::vector<Checked>>& table() {
  static const std::map<std::string, std::vector<Checked>> t = {
      {"clamp", {{"min", kResult, kComplexSelf}, {"max", kResult, kComplexSelf}}},
      {"clamp_min", {{"min", kResult, kComplexSelf}}},
      {"clamp_max", {{"max", kResult, kComplexSelf}}},
      {"hardtanh", {{"min_val", kSelf, kComplexSelf}, {"max_val", kSelf, kComplexSelf}}},
      {"constant_pad_nd", {{"value", kSelf, kNothingPadded}}},
      {"masked_fill", {{"value", kSelf}}},
      {"threshold", {{"threshold", kSelfOpmath, kComplexSelf}, {"value", kSelf, kComplexSelf}}},
      {"addcmul", {{"value", kSelfOpmath}}},
      {"addcdiv", {{"value", kSelfOpmath}}},
      {"add", {{"alpha", kResult}}},
      {"sub", {{"alpha", kResult}}},
      {"hardshrink", {{"lambd", kSelf, kNonFloatSelf}}},
      {"hardshrink_backward", {{"lambd", kSelf, kNonFloatSelf}}},
      {"softshrink_backward", {{"lambd", kSelf, kNonFloatSelf}}},
      {"histc", {{"min", kSelf}, {"max", kSelf}}},
      {"index_fill", {{"value", kSelf}}},
      {"scatter", {{"value", kSelf}}},
      {"leaky_relu", {{"negative_slope", kSelfOpmath, kNonFloatSelf}}},
      {"leaky_relu_backward", {{"negative_slope", kSelfOpmath, kNonFloatSelf}}},
      {"elu", {{"alpha", kSelfOpmath, kNonFloatSelf}, {"scale", kSelfOpmath, kNonFloatSelf},
               {"input_scale", kSelfOpmath, kNonFloatSelf}}},
      {"elu_backward", {{"alpha", kSelfOpmath, kNonFloatSelf}, {"scale", kSelfOpmath, kNonFloatSelf},
                        {"input_scale", kSelfOpmath, kNonFloatSelf}}},
      {"softplus", {{"beta", kSelfOpmath, kNonFloatSelf}, {"threshold", kSelfOpmath, kNonFloatSelf}}},
      {"softplus_backward", {{"beta", kSelfOpmath, kNonFloatSelf}, {"threshold", kSelfOpmath, kNonFloatSelf}}},
      {"hardtanh_backward", {{"min_val", kSelfOpmath, kNonFloatSelf}, {"max_val", kSelfOpmath, kNonFloatSelf}}},
      {"lerp", {{"weight", kSelfOpmath, kIntegralSelf}}},
      {"addr", {{"beta", kSelf}, {"alpha", kSelf}}},
      {"multi_margin_loss", {{"margin", kSelf, kNonFloatSelf}}},
      {"rrelu_with_noise", {{"lower", kSelfOpmath, kNonFloatSelf}, {"upper", kSelfOpmath, kNonFloatSelf}}},
      {"logit", {{"eps", kFloatResult, kComplexSelf}}},
      {"addmm", {{"beta", kSelfOpmath, kEmptyOperand}, {"alpha", kSelfOpmath, kEmptyOperand}}},
      {"addmv", {{"beta", kSelfOrDoubleIfHalfAndEmpty}, {"alpha", kSelf, kEmptyOperand}}},
      {"pow", {{"exponent", kResult, kWideResult}}},
      {"threshold_backward", {{"threshold", kTensorsOpmath, kBoolOrComplexSelf}}},
      {"addbmm", {{"beta", kSelfOpmath, kEmptyOperand}, {"alpha", kSelfOpmath, kEmptyOperand}}},
      {"baddbmm", {{"beta", kSelfOpmath, kEmptyOperand}, {"alpha", kSelfOpmath, kEmptyOperand}}},
  };
  return t;
}

// The call's result type: every tensor and number argument promoted, as the
// CPU's TensorIterator computes its common dtype (add(float, 1 - 2j, alpha=2j)
// is complex, so its alpha fits).
c10::ScalarType result_of_call(const torch::jit::Stack& stack, size_t first, size_t nargs, bool with_numbers = true) {
  at::native::ResultTypeState state{};
  for (size_t i = 0; i < nargs; ++i) {
    const c10::IValue& v = stack[first + i];
    if (v.isTensor() && v.toTensor().defined()) state = at::native::update_result_type_state(v.toTensor(), state);
    else if (with_numbers && v.isScalar()) state = at::native::update_result_type_state(v.toScalar(), state);
  }
  return at::native::result_type(state);
}

bool any_empty_tensor(const torch::jit::Stack& stack, size_t first, size_t nargs) {
  for (size_t i = 0; i < nargs; ++i)
    if (stack[first + i].isTensor() && stack[first + i].toTensor().defined() && stack[first + i].toTensor().numel() == 0)
      return true;
  return false;
}

c10::ScalarType target_type(Target t, const at::Tensor& self, const torch::jit::Stack& stack, size_t first,
                            size_t nargs) {
  c10::ScalarType d = self.scalar_type();
  bool half = d == c10::kHalf || d == c10::kBFloat16;
  switch (t) {
    // promoted only here: float8 promotes with nothing (masked_fill's bool mask)
    case kResult: return result_of_call(stack, first, nargs);
    case kSelf: return d;
    case kSelfOpmath: return half ? c10::kFloat : d;
    case kFloatResult: return c10::isIntegralType(d, /*includeBool=*/true) ? c10::typeMetaToScalarType(c10::get_default_dtype()) : d;
    case kSelfOrDoubleIfHalfAndEmpty: return half && any_empty_tensor(stack, first, nargs) ? c10::kDouble : d;
    case kTensorsOpmath: {
      c10::ScalarType r = result_of_call(stack, first, nargs, /*with_numbers=*/false);
      return r == c10::kHalf || r == c10::kBFloat16 ? c10::kFloat : r;
    }
  }
  return d;
}

std::string base_name(const c10::FunctionSchema& schema) {
  std::string n = schema.name();
  if (n.rfind("aten::", 0) != 0) return "";
  n = n.substr(6);
  if (!n.empty() && n.back() == '_') n.pop_back();
  return n;
}

}  // namespace

std::vector<ScalarRangeCheck> scalar_range_checks(const c10::FunctionSchema& schema) {
  std::vector<ScalarRangeCheck> checks;
  auto it = table().find(base_name(schema));
  if (it == table().end()) return checks;
  const auto& args = schema.arguments();
  for (const Checked& c : it->second)
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].name() == c.arg) checks.push_back({i, static_cast<int>(c.target), static_cast<int>(c.skip)});
  return checks;
}

void check_scalar_ranges(const std::vector<ScalarRangeCheck>& checks, const torch::jit::Stack& stack, size_t first,
                         size_t nargs) {
  const at::Tensor* self = nullptr;
  for (size_t i = 0; i < nargs && !self; ++i)
    if (stack[first + i].isTensor() && stack[first + i].toTensor().defined()) self = &stack[first + i].toTensor();
  if (!self) return;
  auto skipped = [&](int skip) {
    switch (skip) {
      case kNonFloatSelf: return !self->is_floating_point();
      case kComplexSelf: return self->is_complex();
      case kIntegralSelf: return c10::isIntegralType(self->scalar_type(), /*includeBool=*/true);
      case kBoolOrComplexSelf: return self->scalar_type() == c10::kBool || self->is_complex();
      case kEmptyOperand: return any_empty_tensor(stack, first, nargs);
      case kNothingPadded:
        for (size_t i = 0; i < nargs; ++i)
          if (stack[first + i].isIntList())
            for (int64_t p : stack[first + i].toIntList())
              if (p > 0) return false;
        return true;
      default: return false;
    }
  };
  for (const ScalarRangeCheck& c : checks) {
    if (skipped(c.skip)) continue;
    const c10::IValue& v = stack.at(first + c.arg);
    // a tensor there is no number
    if (!v.isScalar() && !v.isDouble() && !v.isInt()) continue;
    c10::Scalar s = v.toScalar();
    // the common case on this per-call path (add's alpha = 1, clamp(0, 1)):
    // a real number in [0, 127] fits every dtype, so no promotion is computed
    if (s.isBoolean()) continue;
    if (!s.isComplex()) {
      double d = s.toDouble();
      if (d >= 0 && d <= 127) continue;
    }
    c10::ScalarType target;
    try {
      target = target_type(static_cast<Target>(c.target), *self, stack, first, nargs);
    } catch (const c10::Error&) {
      continue;  // no common dtype (float8 promotes with nothing): the op's own checks raise
    }
    if (c.skip == kWideResult && (target == c10::kFloat || target == c10::kDouble || c10::isComplexType(target)))
      continue;
    switch (target) {  // (float8, complex32 and the wide unsigned types: not checked)
      case c10::kFloat8_e5m2:
      case c10::kFloat8_e4m3fn:
      case c10::kUInt16:
      case c10::kUInt32:
      case c10::kUInt64:
      case c10::kComplexHalf: continue;
      default: break;
    }
    AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(c10::kHalf, c10::kBFloat16, c10::kBool, target, "scalar_range_check",
                                           [&] { (void)s.to<scalar_t>(); });
  }
}

}  // namespace torch_tpu::eager
