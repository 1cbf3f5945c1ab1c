// cdist / pdist internals (_cdist_forward, _cdist_backward, _pdist_forward,
// _pdist_backward): the argument checks the CPU makes and PyTorch's meta
// kernels leave out, so bad calls raise as on the CPU instead of computing.
// The CPU's kernels read their operands' data as scalar_t, so a second dtype
// raises "expected scalar type ..."; sizes they read past (a short grad, a
// 3-d pdist input) are refused here, where the CPU reads unrelated memory.
#include "eager/meta_overrides/registry.h"

#include <ATen/ExpandUtils.h>
#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

void same_dtype(const at::Tensor& want, const at::Tensor& t) {
  TORCH_CHECK(t.scalar_type() == want.scalar_type(), "expected scalar type ", want.scalar_type(), " but found ",
              t.scalar_type());
}

// The CPU's kernels take float32 and float64 only; for other dtypes their
// dispatch raises NotImplementedError first (the lowering rule raises it).
bool kernel_dtype(const at::Tensor& t) { return t.scalar_type() == c10::kFloat || t.scalar_type() == c10::kDouble; }

int64_t batch_rows(const at::Tensor& x1, const at::Tensor& x2) {
  auto b1 = x1.sizes().slice(0, x1.dim() - 2), b2 = x2.sizes().slice(0, x2.dim() - 2);
  std::vector<int64_t> b = at::infer_size(b1, b2);
  int64_t n = 1;
  for (int64_t s : b) n *= s;
  return n;
}

// _cdist_forward(x1, x2, p, compute_mode)
std::vector<c10::IValue> cdist_forward_meta(const torch::jit::Stack& stack, size_t first) {
  std::vector<c10::IValue> r = default_meta("aten::_cdist_forward", "", stack, first);
  const at::Tensor& x1 = stack[first].toTensor();
  const at::Tensor& x2 = stack[first + 1].toTensor();
  if (r.at(0).toTensor().numel() > 0 && x1.size(-1) > 0 && kernel_dtype(x1)) same_dtype(x1, x2);
  return r;
}

// _cdist_backward(grad, x1, x2, p, cdist)
std::vector<c10::IValue> cdist_backward_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& grad = stack[first].toTensor();
  const at::Tensor& x1 = stack[first + 1].toTensor();
  const at::Tensor& x2 = stack[first + 2].toTensor();
  const at::Tensor& dist = stack[first + 4].toTensor();
  // x.size(-2) of a 1-d (or 0-d) X1 or X2: IndexError, as the CPU
  TORCH_CHECK_INDEX(x1.dim() >= 2 && x2.dim() >= 2, "Dimension out of range (expected to be in range of [-1, 0], but got -2)");
  std::vector<c10::IValue> r = default_meta("aten::_cdist_backward", "", stack, first);
  int64_t r1 = x1.size(-2), r2 = x2.size(-2), c1 = x1.size(-1);
  int64_t batch = batch_rows(x1, x2);
  if (r1 == 0 || r2 == 0 || c1 == 0 || batch == 0 || !kernel_dtype(x1)) return r;
  same_dtype(x1, grad);
  same_dtype(x1, x2);
  same_dtype(x1, dist);
  TORCH_CHECK(x2.size(-1) == c1, "_cdist_backward: X1 and X2 must have the same number of columns. X1: ", c1,
              " X2: ", x2.size(-1));
  int64_t need = batch * r1 * r2;
  TORCH_CHECK(grad.numel() >= need && dist.numel() >= need, "_cdist_backward: expected grad and cdist with ", need,
              " elements (the distances' shape), got ", grad.numel(), " and ", dist.numel());
  return r;
}

// _pdist_forward(self, p)
std::vector<c10::IValue> pdist_forward_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  std::vector<c10::IValue> r = default_meta("aten::_pdist_forward", "", stack, first);
  if (self.size(0) > 1) {
    if (self.size(1) == 0 || !kernel_dtype(self)) return r;  // (a 1-d input: IndexError above, as the CPU)
    TORCH_CHECK(self.dim() == 2, "_pdist_forward: expected a 2D input, got ", self.dim(), "D");
  }
  return r;
}

// _pdist_backward(grad, self, p, pdist): the CPU reads self's first n * m
// values as an [n, m] matrix, grad[k, 0, ...] (grad's stride 0) and pdist's
// first values, one per pair of rows.
std::vector<c10::IValue> pdist_backward_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& grad = stack[first].toTensor();
  const at::Tensor& self = stack[first + 1].toTensor();
  double p = stack[first + 2].toDouble();
  const at::Tensor& dist = stack[first + 3].toTensor();
  std::vector<c10::IValue> r = default_meta("aten::_pdist_backward", "", stack, first);
  if (p == 0 || !kernel_dtype(self)) return r;
  int64_t n = self.size(0), m = self.size(1);
  (void)grad.stride(0);  // IndexError for a 0-d grad, as the CPU
  same_dtype(self, grad);
  same_dtype(self, dist);
  int64_t pairs = n * (n - 1) / 2;
  if (m > 0 && pairs > 0)
    TORCH_CHECK(grad.size(0) >= pairs && dist.numel() >= pairs, "_pdist_backward: expected grad and pdist with ",
                pairs, " values (one per pair of rows), got grad of shape ", grad.sizes(), " and pdist of shape ",
                dist.sizes());
  return r;
}

const MetaOverrideRegistrar registrar{
    {"aten::_cdist_forward", cdist_forward_meta},
    {"aten::_cdist_backward", cdist_backward_meta},
    {"aten::_pdist_forward", pdist_forward_meta},
    {"aten::_pdist_backward", pdist_backward_meta},
};

}  // namespace
}  // namespace torch_tpu::eager
