// Ops built from other tpu ops: torch.equal (a host bool), Tensor.unfold (a
// view, as on every backend), and masked_scatter_ (the mask's count is read to
// the host first, like nonzero, then an indexed write).
#include <ATen/ExpandUtils.h>
#include <ATen/ops/unfold_native.h>
#include <torch/library.h>

namespace torch_tpu::eager {
namespace {

// Same sizes and the same values (after type promotion, like the CPU); NaN != NaN.
bool tpu_equal(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(), "Expected all tensors to be on the same device, but found ",
              self.device(), " and ", other.device(), " (when checking arguments for equal)");
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  return self.eq(other).all().item<bool>();
}

at::Tensor tpu_unfold(const at::Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  return at::native::unfold(self, dimension, size, step);
}

at::Tensor& tpu_masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "masked_scatter_: expected self and source to have same dtypes but got ", self.scalar_type(), " and ",
              source.scalar_type());
  at::Tensor m = mask.device() == self.device() ? mask : mask.to(self.device());
  m = *at::expand_inplace(self, m, "masked_scatter_");
  int64_t n = m.sum().item<int64_t>();
  TORCH_CHECK(source.numel() >= n, "masked_scatter_: number of elements in source < number of ones in mask (",
              source.numel(), " < ", n, ")");
  if (n == 0) return self;
  c10::List<std::optional<at::Tensor>> indices;
  indices.push_back(m);
  return self.index_put_(indices, source.reshape({-1}).narrow(0, 0, n));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("equal", tpu_equal);
  m.impl("unfold", tpu_unfold);
  m.impl("masked_scatter_", tpu_masked_scatter_);
}

}  // namespace torch_tpu::eager
