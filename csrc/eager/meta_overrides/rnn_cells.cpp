// The fused LSTM/GRU cells and their backward ops: shape checks against the
// workspace layout of ops/rnn_cells.cpp.
#include "eager/meta_overrides/registry.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

// The fused GRU cell has no meta kernel (its only kernel is CUDA's); the
// workspace layout is the one of ops/rnn_cells.cpp: [B, 5H].
// The fused cells' gates (input and hidden, [B, G*H]) against the state [B, H].
void check_fused_cell_shapes(const char* name, int64_t gates_per_unit, const char* state,
                             const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& gates = stack[first].toTensor();
  const at::Tensor& hidden_gates = stack[first + 1].toTensor();
  const at::Tensor& h = stack[first + 2].toTensor();
  TORCH_CHECK(gates.dim() == 2 && h.dim() == 2 && gates.size(1) == gates_per_unit * h.size(1) &&
                  gates.size(0) == h.size(0) && hidden_gates.sizes() == gates.sizes(),
              name, ": expected input_gates and hidden_gates of shape [B, ", gates_per_unit, "H] and ", state,
              " of [B, H], got ", gates.sizes(), ", ", hidden_gates.sizes(), " and ", h.sizes());
}

std::vector<c10::IValue> gru_cell_meta(const torch::jit::Stack& stack, size_t first) {
  check_fused_cell_shapes("_thnn_fused_gru_cell", 3, "hx", stack, first);
  const at::Tensor& hx = stack[first + 2].toTensor();
  auto opts = hx.options().device(c10::kMeta);
  return {at::empty(hx.sizes(), opts), at::empty({hx.size(0), 5 * hx.size(1)}, opts)};
}

// The fused LSTM cell: PyTorch's meta kernel reads the biases' devices
// without checking they were given (nn.LSTM(bias=False) fails in it).
std::vector<c10::IValue> lstm_cell_meta(const torch::jit::Stack& stack, size_t first) {
  check_fused_cell_shapes("_thnn_fused_lstm_cell", 4, "cx", stack, first);
  const at::Tensor& gates = stack[first].toTensor();
  const at::Tensor& cx = stack[first + 2].toTensor();
  auto opts = gates.options().device(c10::kMeta);
  return {at::empty(cx.sizes(), opts), at::empty(cx.sizes(), opts), at::empty(gates.sizes(), opts)};
}

std::vector<c10::IValue> gru_cell_backward_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& grad = stack[first].toTensor();
  const at::Tensor& workspace = stack[first + 1].toTensor();
  TORCH_CHECK(grad.dim() == 2 && workspace.dim() == 2 && workspace.size(0) == grad.size(0) &&
                  workspace.size(1) == 5 * grad.size(1),
              "_thnn_fused_gru_cell_backward: expected grad_hy of shape [B, H] and workspace of [B, 5H], got ",
              grad.sizes(), " and ", workspace.sizes());
  bool has_bias = stack[first + 2].toBool();
  auto opts = grad.options().device(c10::kMeta);
  int64_t n = grad.size(0), h = grad.size(1);
  auto bias = [&] { return has_bias ? c10::IValue(at::empty({3 * h}, opts)) : c10::IValue(at::Tensor()); };
  return {at::empty({n, 3 * h}, opts), at::empty({n, 3 * h}, opts), at::empty({n, h}, opts), bias(), bias()};
}

// PyTorch's meta kernel for it checks nothing (and returns no tensors); the
// lowering slices the workspace [B, 4H] of the forward above.
std::vector<c10::IValue> lstm_cell_backward_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& cx = stack[first + 2].toTensor();
  const at::Tensor& cy = stack[first + 3].toTensor();
  const at::Tensor& workspace = stack[first + 4].toTensor();
  auto state_shaped = [&](const c10::IValue& t) {
    return t.isNone() || !t.toTensor().defined() || t.toTensor().sizes() == cx.sizes();
  };
  TORCH_CHECK(cx.dim() == 2 && workspace.dim() == 2 && workspace.size(0) == cx.size(0) &&
                  workspace.size(1) == 4 * cx.size(1) && cy.sizes() == cx.sizes() && state_shaped(stack[first]) &&
                  state_shaped(stack[first + 1]),
              "_thnn_fused_lstm_cell_backward_impl: expected cx, cy (and the grads given) of shape [B, H] and "
              "workspace of [B, 4H], got cx ", cx.sizes(), ", cy ", cy.sizes(), " and workspace ", workspace.sizes());
  auto opts = workspace.options().device(c10::kMeta);
  bool has_bias = stack[first + 5].toBool();
  return {at::empty(workspace.sizes(), opts), at::empty(cx.sizes(), opts),
          has_bias ? c10::IValue(at::empty({workspace.size(1)}, opts)) : c10::IValue(at::Tensor())};
}

const MetaOverrideRegistrar registrar{
    {"aten::_thnn_fused_lstm_cell", lstm_cell_meta},
    {"aten::_thnn_fused_gru_cell", gru_cell_meta},
    {"aten::_thnn_fused_gru_cell_backward", gru_cell_backward_meta},
    {"aten::_thnn_fused_lstm_cell_backward_impl", lstm_cell_backward_meta},
};

}  // namespace
}  // namespace torch_tpu::eager
