#include "eager/native_meta.h"

#include <ATen/core/boxing/KernelFunction.h>

#include <ATen/ops/add_meta_dispatch.h>
#include <ATen/ops/addcdiv_meta_dispatch.h>
#include <ATen/ops/addcmul_meta_dispatch.h>
#include <ATen/ops/all_meta_dispatch.h>
#include <ATen/ops/amax_meta_dispatch.h>
#include <ATen/ops/amin_meta_dispatch.h>
#include <ATen/ops/any_meta_dispatch.h>
#include <ATen/ops/argmax_meta_dispatch.h>
#include <ATen/ops/atan2_meta_dispatch.h>
#include <ATen/ops/cat_meta_dispatch.h>
#include <ATen/ops/clamp_meta_dispatch.h>
#include <ATen/ops/cos_meta_dispatch.h>
#include <ATen/ops/cumsum_meta_dispatch.h>
#include <ATen/ops/div_meta_dispatch.h>
#include <ATen/ops/eq_meta_dispatch.h>
#include <ATen/ops/erf_meta_dispatch.h>
#include <ATen/ops/exp_meta_dispatch.h>
#include <ATen/ops/expm1_meta_dispatch.h>
#include <ATen/ops/ge_meta_dispatch.h>
#include <ATen/ops/gt_meta_dispatch.h>
#include <ATen/ops/le_meta_dispatch.h>
#include <ATen/ops/lerp_meta_dispatch.h>
#include <ATen/ops/log1p_meta_dispatch.h>
#include <ATen/ops/log_meta_dispatch.h>
#include <ATen/ops/lt_meta_dispatch.h>
#include <ATen/ops/maximum_meta_dispatch.h>
#include <ATen/ops/mean_meta_dispatch.h>
#include <ATen/ops/minimum_meta_dispatch.h>
#include <ATen/ops/mul_meta_dispatch.h>
#include <ATen/ops/ne_meta_dispatch.h>
#include <ATen/ops/neg_meta_dispatch.h>
#include <ATen/ops/pow_meta_dispatch.h>
#include <ATen/ops/reciprocal_meta_dispatch.h>
#include <ATen/ops/rsqrt_meta_dispatch.h>
#include <ATen/ops/sigmoid_meta_dispatch.h>
#include <ATen/ops/silu_meta_dispatch.h>
#include <ATen/ops/sin_meta_dispatch.h>
#include <ATen/ops/sqrt_meta_dispatch.h>
#include <ATen/ops/sub_meta_dispatch.h>
#include <ATen/ops/sum_meta_dispatch.h>
#include <ATen/ops/tanh_meta_dispatch.h>
#include <ATen/ops/tril_meta_dispatch.h>
#include <ATen/ops/triu_meta_dispatch.h>

#include <ATen/ops/upsample_linear1d_meta_dispatch.h>
#include <ATen/ops/upsample_bilinear2d_meta_dispatch.h>
#include <ATen/ops/upsample_bicubic2d_meta_dispatch.h>
#include <ATen/ops/upsample_trilinear3d_meta_dispatch.h>
#include <ATen/ops/upsample_nearest1d_meta_dispatch.h>
#include <ATen/ops/upsample_nearest2d_meta_dispatch.h>
#include <ATen/ops/upsample_nearest3d_meta_dispatch.h>
#include <ATen/ops/_upsample_nearest_exact1d_meta_dispatch.h>
#include <ATen/ops/_upsample_nearest_exact2d_meta_dispatch.h>
#include <ATen/ops/_upsample_nearest_exact3d_meta_dispatch.h>
#include <ATen/ops/_upsample_bilinear2d_aa_meta_dispatch.h>
#include <ATen/ops/_upsample_bicubic2d_aa_meta_dispatch.h>

#include <ATen/ops/bitwise_and_meta_dispatch.h>
#include <ATen/ops/bitwise_or_meta_dispatch.h>
#include <ATen/ops/bitwise_not_meta_dispatch.h>
#include <ATen/ops/clamp_min_meta_dispatch.h>
#include <ATen/ops/clamp_max_meta_dispatch.h>
#include <ATen/ops/floor_meta_dispatch.h>
#include <ATen/ops/ceil_meta_dispatch.h>
#include <ATen/ops/round_meta_dispatch.h>
#include <ATen/ops/sign_meta_dispatch.h>
#include <ATen/ops/trunc_meta_dispatch.h>
#include <ATen/ops/fmod_meta_dispatch.h>
#include <ATen/ops/remainder_meta_dispatch.h>
#include <ATen/ops/hypot_meta_dispatch.h>
#include <ATen/ops/xlogy_meta_dispatch.h>
#include <ATen/ops/logaddexp_meta_dispatch.h>
#include <ATen/ops/copysign_meta_dispatch.h>
#include <ATen/ops/fmax_meta_dispatch.h>
#include <ATen/ops/fmin_meta_dispatch.h>
#include <ATen/ops/lgamma_meta_dispatch.h>
#include <ATen/ops/digamma_meta_dispatch.h>
#include <ATen/ops/erfinv_meta_dispatch.h>
#include <ATen/ops/erfc_meta_dispatch.h>
#include <ATen/ops/tan_meta_dispatch.h>
#include <ATen/ops/asin_meta_dispatch.h>
#include <ATen/ops/acos_meta_dispatch.h>
#include <ATen/ops/atan_meta_dispatch.h>
#include <ATen/ops/sinh_meta_dispatch.h>
#include <ATen/ops/cosh_meta_dispatch.h>
#include <ATen/ops/exp2_meta_dispatch.h>
#include <ATen/ops/log2_meta_dispatch.h>
#include <ATen/ops/frac_meta_dispatch.h>
#include <ATen/ops/sgn_meta_dispatch.h>
#include <ATen/ops/softplus_meta_dispatch.h>
#include <ATen/ops/threshold_meta_dispatch.h>
#include <ATen/ops/leaky_relu_meta_dispatch.h>
#include <ATen/ops/hardsigmoid_meta_dispatch.h>
#include <ATen/ops/mish_meta_dispatch.h>
#include <ATen/ops/argmin_meta_dispatch.h>
#include <ATen/ops/gather_meta_dispatch.h>
#include <ATen/ops/index_copy_meta_dispatch.h>
#include <ATen/ops/index_add_meta_dispatch.h>
#include <ATen/ops/topk_meta_dispatch.h>
#include <ATen/ops/max_meta_dispatch.h>
#include <ATen/ops/min_meta_dispatch.h>
#include <ATen/ops/prod_meta_dispatch.h>

#include <string>
#include <unordered_map>

namespace torch_tpu::eager {
namespace {

using T = const at::Tensor&;
using W = at::Tensor&;  // written in place
using S = const at::Scalar&;
using OptS = const std::optional<at::Scalar>&;
using OptT = const std::optional<at::Tensor>&;
using Dims = at::OptionalIntArrayRef;
using OptDtype = std::optional<at::ScalarType>;
using TensorPair = std::tuple<at::Tensor, at::Tensor>;
using Sizes = at::IntArrayRef;
using OptD = std::optional<double>;

// One overload of at::meta::fn, chosen by its parameter types, as a boxed kernel.
template <class Ret, class... Args>
c10::KernelFunction boxed(Ret (*fn)(Args...)) {
  return c10::KernelFunction::makeFromUnboxedRuntimeFunction(fn);
}

#define FN(fn, Ret, ...) boxed(static_cast<Ret (*)(__VA_ARGS__)>(&at::meta::fn))
// A unary op and its in-place form.
#define UNARY(name) {"aten::" #name, FN(name, at::Tensor, T)}, {"aten::" #name "_", FN(name##_, at::Tensor&, W)}
// A comparison's Scalar and Tensor overloads, functional and in place.
#define COMPARISON(name)                                                                 \
  {"aten::" #name ".Scalar", FN(name, at::Tensor, T, S)},                               \
      {"aten::" #name ".Tensor", FN(name, at::Tensor, T, T)},                           \
      {"aten::" #name "_.Scalar", FN(name##_, at::Tensor&, W, S)},                      \
      {"aten::" #name "_.Tensor", FN(name##_, at::Tensor&, W, T)}

// Not here: gelu, whose C++ meta function leaves the check of `approximate`
// to the CPU kernel (PyTorch's Python meta checks it, as the CPU does first);
// masked_fill_ (declared in torch's headers, not exported by libtorch_cpu).
const std::unordered_map<std::string, c10::KernelFunction>& table() {
  static const auto* t = new std::unordered_map<std::string, c10::KernelFunction>{
      {"aten::add.Tensor", FN(add, at::Tensor, T, T, S)},
      {"aten::add_.Tensor", FN(add_, at::Tensor&, W, T, S)},
      {"aten::sub.Tensor", FN(sub, at::Tensor, T, T, S)},
      {"aten::sub_.Tensor", FN(sub_, at::Tensor&, W, T, S)},
      {"aten::mul.Tensor", FN(mul, at::Tensor, T, T)},
      {"aten::mul_.Tensor", FN(mul_, at::Tensor&, W, T)},
      {"aten::div.Tensor", FN(div, at::Tensor, T, T)},
      {"aten::div_.Tensor", FN(div_, at::Tensor&, W, T)},
      {"aten::div.Tensor_mode", FN(div, at::Tensor, T, T, std::optional<c10::string_view>)},
      {"aten::div_.Tensor_mode", FN(div_, at::Tensor&, W, T, std::optional<c10::string_view>)},
      {"aten::pow.Tensor_Tensor", FN(pow, at::Tensor, T, T)},
      {"aten::pow.Tensor_Scalar", FN(pow, at::Tensor, T, S)},
      {"aten::pow.Scalar", FN(pow, at::Tensor, S, T)},
      {"aten::pow_.Tensor", FN(pow_, at::Tensor&, W, T)},
      {"aten::pow_.Scalar", FN(pow_, at::Tensor&, W, S)},
      COMPARISON(eq), COMPARISON(ne), COMPARISON(lt), COMPARISON(le), COMPARISON(gt), COMPARISON(ge),
      {"aten::maximum", FN(maximum, at::Tensor, T, T)},
      {"aten::minimum", FN(minimum, at::Tensor, T, T)},
      {"aten::atan2", FN(atan2, at::Tensor, T, T)},
      {"aten::atan2_", FN(atan2_, at::Tensor&, W, T)},
      UNARY(neg), UNARY(exp), UNARY(log), UNARY(rsqrt), UNARY(sqrt), UNARY(sin), UNARY(cos), UNARY(tanh),
      UNARY(sigmoid), UNARY(reciprocal), UNARY(erf), UNARY(log1p), UNARY(expm1), UNARY(silu),
      {"aten::mean.dim", FN(mean, at::Tensor, T, Dims, bool, OptDtype)},
      {"aten::sum.dim_IntList", FN(sum, at::Tensor, T, Dims, bool, OptDtype)},
      {"aten::amax", FN(amax, at::Tensor, T, at::IntArrayRef, bool)},
      {"aten::amin", FN(amin, at::Tensor, T, at::IntArrayRef, bool)},
      {"aten::argmax", FN(argmax, at::Tensor, T, std::optional<int64_t>, bool)},
      {"aten::any", FN(any, at::Tensor, T)},
      {"aten::any.dim", FN(any, at::Tensor, T, int64_t, bool)},
      {"aten::any.dims", FN(any, at::Tensor, T, Dims, bool)},
      {"aten::all", FN(all, at::Tensor, T)},
      {"aten::all.dim", FN(all, at::Tensor, T, int64_t, bool)},
      {"aten::all.dims", FN(all, at::Tensor, T, Dims, bool)},
      {"aten::cat", FN(cat, at::Tensor, const at::ITensorListRef&, int64_t)},
      {"aten::clamp", FN(clamp, at::Tensor, T, OptS, OptS)},
      {"aten::clamp.Tensor", FN(clamp, at::Tensor, T, OptT, OptT)},
      {"aten::clamp_", FN(clamp_, at::Tensor&, W, OptS, OptS)},
      {"aten::clamp_.Tensor", FN(clamp_, at::Tensor&, W, OptT, OptT)},
      {"aten::addcmul", FN(addcmul, at::Tensor, T, T, T, S)},
      {"aten::addcmul_", FN(addcmul_, at::Tensor&, W, T, T, S)},
      {"aten::addcdiv", FN(addcdiv, at::Tensor, T, T, T, S)},
      {"aten::addcdiv_", FN(addcdiv_, at::Tensor&, W, T, T, S)},
      {"aten::lerp.Scalar", FN(lerp, at::Tensor, T, T, S)},
      {"aten::lerp.Tensor", FN(lerp, at::Tensor, T, T, T)},
      {"aten::lerp_.Scalar", FN(lerp_, at::Tensor&, W, T, S)},
      {"aten::lerp_.Tensor", FN(lerp_, at::Tensor&, W, T, T)},
      UNARY(floor), UNARY(ceil), UNARY(trunc), UNARY(sign), UNARY(sgn), UNARY(frac), UNARY(lgamma), UNARY(digamma),
      UNARY(erfinv), UNARY(erfc), UNARY(tan), UNARY(asin), UNARY(acos), UNARY(atan), UNARY(sinh), UNARY(cosh),
      UNARY(exp2), UNARY(log2), UNARY(mish), UNARY(hardsigmoid), UNARY(bitwise_not),
      {"aten::round", FN(round, at::Tensor, T)},
      {"aten::round.decimals", FN(round, at::Tensor, T, int64_t)},
      {"aten::bitwise_and.Tensor", FN(bitwise_and, at::Tensor, T, T)},
      {"aten::bitwise_and_.Tensor", FN(bitwise_and_, at::Tensor&, W, T)},
      {"aten::bitwise_or.Tensor", FN(bitwise_or, at::Tensor, T, T)},
      {"aten::bitwise_or_.Tensor", FN(bitwise_or_, at::Tensor&, W, T)},
      {"aten::clamp_min", FN(clamp_min, at::Tensor, T, S)},
      {"aten::clamp_min.Tensor", FN(clamp_min, at::Tensor, T, T)},
      {"aten::clamp_max", FN(clamp_max, at::Tensor, T, S)},
      {"aten::clamp_max.Tensor", FN(clamp_max, at::Tensor, T, T)},
      {"aten::clamp_min_", FN(clamp_min_, at::Tensor&, W, S)},
      {"aten::clamp_max_", FN(clamp_max_, at::Tensor&, W, S)},
      {"aten::fmod.Tensor", FN(fmod, at::Tensor, T, T)},
      {"aten::remainder.Tensor", FN(remainder, at::Tensor, T, T)},
      {"aten::hypot", FN(hypot, at::Tensor, T, T)},
      {"aten::xlogy.Tensor", FN(xlogy, at::Tensor, T, T)},
      {"aten::logaddexp", FN(logaddexp, at::Tensor, T, T)},
      {"aten::copysign.Tensor", FN(copysign, at::Tensor, T, T)},
      {"aten::fmax", FN(fmax, at::Tensor, T, T)},
      {"aten::fmin", FN(fmin, at::Tensor, T, T)},
      {"aten::softplus", FN(softplus, at::Tensor, T, S, S)},
      {"aten::threshold", FN(threshold, at::Tensor, T, S, S)},
      {"aten::leaky_relu", FN(leaky_relu, at::Tensor, T, S)},
      {"aten::argmin", FN(argmin, at::Tensor, T, std::optional<int64_t>, bool)},
      {"aten::gather", FN(gather, at::Tensor, T, int64_t, T, bool)},
      {"aten::index_copy", FN(index_copy, at::Tensor, T, int64_t, T, T)},
      {"aten::index_add", FN(index_add, at::Tensor, T, int64_t, T, T, S)},
      {"aten::topk", FN(topk, TensorPair, T, int64_t, int64_t, bool, bool)},
      {"aten::max.dim", FN(max, TensorPair, T, int64_t, bool)},
      {"aten::min.dim", FN(min, TensorPair, T, int64_t, bool)},
      {"aten::prod.dim_int", FN(prod, at::Tensor, T, int64_t, bool, OptDtype)},
      {"aten::tril", FN(tril, at::Tensor, T, int64_t)},
      {"aten::tril_", FN(tril_, at::Tensor&, W, int64_t)},
      {"aten::triu", FN(triu, at::Tensor, T, int64_t)},
      {"aten::triu_", FN(triu_, at::Tensor&, W, int64_t)},
      {"aten::cumsum", FN(cumsum, at::Tensor, T, int64_t, OptDtype)},
      {"aten::cumsum_", FN(cumsum_, at::Tensor&, W, int64_t, OptDtype)},
      // upsampling: PyTorch's Python meta kernels skip the CPU's size checks
      // (an output size 0 gave an empty tensor, or raised ZeroDivisionError)
      {"aten::upsample_linear1d", FN(upsample_linear1d, at::Tensor, T, Sizes, bool, OptD)},
      {"aten::upsample_bilinear2d", FN(upsample_bilinear2d, at::Tensor, T, Sizes, bool, OptD, OptD)},
      {"aten::upsample_bicubic2d", FN(upsample_bicubic2d, at::Tensor, T, Sizes, bool, OptD, OptD)},
      {"aten::upsample_trilinear3d", FN(upsample_trilinear3d, at::Tensor, T, Sizes, bool, OptD, OptD, OptD)},
      {"aten::upsample_nearest1d", FN(upsample_nearest1d, at::Tensor, T, Sizes, OptD)},
      {"aten::upsample_nearest2d", FN(upsample_nearest2d, at::Tensor, T, Sizes, OptD, OptD)},
      {"aten::upsample_nearest3d", FN(upsample_nearest3d, at::Tensor, T, Sizes, OptD, OptD, OptD)},
      {"aten::_upsample_nearest_exact1d", FN(_upsample_nearest_exact1d, at::Tensor, T, Sizes, OptD)},
      {"aten::_upsample_nearest_exact2d", FN(_upsample_nearest_exact2d, at::Tensor, T, Sizes, OptD, OptD)},
      {"aten::_upsample_nearest_exact3d", FN(_upsample_nearest_exact3d, at::Tensor, T, Sizes, OptD, OptD, OptD)},
      {"aten::_upsample_bilinear2d_aa", FN(_upsample_bilinear2d_aa, at::Tensor, T, Sizes, bool, OptD, OptD)},
      {"aten::_upsample_bicubic2d_aa", FN(_upsample_bicubic2d_aa, at::Tensor, T, Sizes, bool, OptD, OptD)},
  };
  return *t;
}

// The op's C++ meta function as a boxed kernel, or null.
const c10::KernelFunction* find_native_meta(const c10::OperatorName& op) {
  const auto& t = table();
  auto it = t.find(op.overload_name.empty() ? op.name : op.name + "." + op.overload_name);
  return it == t.end() ? nullptr : &it->second;
}

}  // namespace

void call_meta_kernel(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
  if (const c10::KernelFunction* native = find_native_meta(op.operator_name())) {
    native->callBoxed(op, c10::DispatchKeySet(c10::DispatchKey::Meta), &stack);
  } else {
    op.callBoxed(stack);
  }
}

}  // namespace torch_tpu::eager
