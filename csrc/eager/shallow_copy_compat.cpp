// Which tensors may swap data in place (`param.data = moved`).
//
// nn.Module.to("tpu") keeps each Parameter object, and so weights tied
// before the move, only when PyTorch deems the CPU and the moved tensor
// shallow-copy compatible; its built-in list of dense backends lacks
// PrivateUse1, so every Parameter was replaced by a new object and tied
// weights came apart silently. A tpu tensor is a plain c10::TensorImpl over
// a tpu storage (the buffer lives in the storage, eager/executor.cpp), so a
// shallow copy between dense CPU and tpu tensors is a copy of TensorImpl
// fields, as between CPU and CUDA.
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <typeinfo>

namespace torch_tpu::eager {
namespace {

bool plain_dense(const at::Tensor& t) {
  auto type = t.device().type();
  return t.layout() == c10::kStrided && (type == c10::kCPU || type == c10::DeviceType::PrivateUse1) &&
         typeid(*t.unsafeGetTensorImpl()) == typeid(c10::TensorImpl);
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  if (self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set())) return true;
  return plain_dense(self) && plain_dense(from);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
}

}  // namespace
}  // namespace torch_tpu::eager
