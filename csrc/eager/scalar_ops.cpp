// fill_, zero_ and _local_scalar_dense (`.item()`).
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "eager/dtype_map.h"
#include "eager/executor.h"
#include "eager/portable_scalars.h"

namespace torch_tpu::eager {

at::Tensor to_host(const at::Tensor& src);  // copy.cpp

namespace {

void fill_with(const at::Tensor& self, const RuntimeScalar& value, const at::Tensor* device_value) {
  Invocation inv;
  inv.op = "fill_";
  inv.targets = {self};
  if (device_value) inv.inputs = {*device_value};
  else inv.scalars = {value};
  inv.device_index = self.device().index();
  hlo::TensorType out(to_hlo(self.scalar_type(), "fill_"), self.sizes().vec());
  inv.lower = [out](hlo::Builder& b, const std::vector<hlo::Value>& t, const std::vector<hlo::Value>& s) {
    const hlo::Value& v = t.empty() ? s.at(0) : t.at(0);
    return std::vector<hlo::Value>{b.broadcast_in_dim(b.convert(v, out.dtype), out.dims, {})};
  };
  execute(inv);
}

at::Tensor& fill_scalar(at::Tensor& self, const c10::Scalar& value) {
  if (self.numel() == 0) {  // nothing to write, but the CPU converts (and checks) the value first
    (void)scalar_for_target(value, self.scalar_type());
    return self;
  }
  // The CPU fills a one-element float16/bfloat16 tensor without its overflow
  // check (1e10 becomes inf there, where a larger tensor's fill raises):
  // torch.where(half, x, 1e10) builds such a tensor for its scalar. It goes
  // through double, so a complex value with an imaginary part raises there.
  bool half = self.scalar_type() == c10::kHalf || self.scalar_type() == c10::kBFloat16;
  if (self.numel() == 1 && half) {
    fill_with(self, scalar_for_target(c10::Scalar(static_cast<float>(value.to<double>())), c10::kFloat), nullptr);
    return self;
  }
  fill_with(self, scalar_for_target(value, self.scalar_type()), nullptr);
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  if (self.numel() == 0) return self;
  if (value.device().type() == c10::DeviceType::PrivateUse1) {
    // ATen's fill_ copies a value on self's device (self.copy_(value)), whose
    // TensorIterator refuses a target that writes one location twice; a
    // number, or a value on another device, fills like fill_.Scalar.
    at::assert_no_internal_overlap(self);
    fill_with(self, RuntimeScalar{}, &value);
  } else {
    fill_with(self, scalar_for_target(value.item(), self.scalar_type()), nullptr);
  }
  return self;
}

at::Tensor& zero(at::Tensor& self) { return fill_scalar(self, c10::Scalar(0)); }

c10::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(), " elements cannot be converted to Scalar");
  return to_host(self).item();
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("fill_.Tensor", fill_tensor);
  m.impl("zero_", zero);
  m.impl("_local_scalar_dense", local_scalar_dense);
}

}  // namespace
}  // namespace torch_tpu::eager
