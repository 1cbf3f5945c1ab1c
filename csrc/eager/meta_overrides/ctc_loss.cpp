// CTC loss ops without a meta kernel: _ctc_loss.Tensor (log_alpha's last dim
// is 2 * max(target_lengths) + 1, so the lengths are read, as the CPU's
// kernel reads them) and the backward ops (a gradient shaped like log_probs).
#include "eager/meta_overrides/registry.h"

#include <ATen/ops/_ctc_loss.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

std::vector<int64_t> host_lengths(const at::Tensor& t, const char* name) {
  TORCH_CHECK(c10::isIntegralType(t.scalar_type(), /*includeBool=*/false), name, " must be integral");
  at::Tensor h = t.to(c10::Device(c10::kCPU), at::kLong).contiguous();
  return std::vector<int64_t>(h.const_data_ptr<int64_t>(), h.const_data_ptr<int64_t>() + h.numel());
}

at::Tensor meta_of(const at::Tensor& t) {
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
}

std::vector<c10::IValue> ctc_loss_tensor_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& log_probs = stack[first].toTensor();
  const at::Tensor& targets = stack[first + 1].toTensor();
  std::vector<int64_t> il = host_lengths(stack[first + 2].toTensor(), "input_lengths");
  std::vector<int64_t> tl = host_lengths(stack[first + 3].toTensor(), "target_lengths");
  auto r = at::_ctc_loss(meta_of(log_probs), meta_of(targets), il, tl, stack[first + 4].toInt(),
                         stack[first + 5].toBool());
  return {std::get<0>(r), std::get<1>(r)};
}

// The CPU's backward checks little (it trusts the forward's checks); its
// gradient is a fresh contiguous tensor like log_probs.
std::vector<c10::IValue> ctc_loss_backward_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& log_probs = stack[first + 1].toTensor();
  return {at::empty(log_probs.sizes(), log_probs.options().device(c10::kMeta))};
}

std::vector<c10::IValue> ctc_loss_backward_tensor_meta(const torch::jit::Stack& stack, size_t first) {
  host_lengths(stack[first + 3].toTensor(), "input_lengths");
  host_lengths(stack[first + 4].toTensor(), "target_lengths");
  return ctc_loss_backward_meta(stack, first);
}

const MetaOverrideRegistrar value_reader({{"aten::_ctc_loss.Tensor", ctc_loss_tensor_meta}}, /*reads_values=*/true);
const MetaOverrideRegistrar registrar{
    {"aten::_ctc_loss_backward", ctc_loss_backward_meta},
    {"aten::_ctc_loss_backward.Tensor", ctc_loss_backward_tensor_meta},
};

}  // namespace
}  // namespace torch_tpu::eager
