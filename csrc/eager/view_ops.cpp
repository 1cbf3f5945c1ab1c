// Metadata-only ops (views, set_, resize_): PyTorch's own stride logic, with
// storage growth going through the tpu allocator so contents are copied on
// the device.
#include <ATen/EmptyTensor.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_cpu_dispatch.h>
#include <ATen/ops/set_cpu_dispatch.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/StorageImpl.h>
#include <torch/library.h>

#include "device/allocator.h"

namespace torch_tpu::eager {
namespace {

at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return at::cpu::as_strided(self, size, stride, storage_offset);
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source) { return at::cpu::set_(self, source); }

at::Tensor& set_storage_offset(at::Tensor& self, c10::Storage source, int64_t offset, c10::IntArrayRef size,
                               c10::IntArrayRef stride) {
  TORCH_CHECK(source.device_type() == c10::DeviceType::PrivateUse1,
              "set_: expected a tpu storage for a tpu tensor, got one on ", source.device());
  return at::cpu::set_(self, source, offset, size, stride);
}

at::Tensor& set_tensor(at::Tensor& self, const at::Tensor& source) { return at::cpu::set_(self, source); }

// set_() with no source: an empty storage from the tpu allocator.
at::Tensor& set_empty(at::Tensor& self) {
  auto* alloc = device::tpu_allocator();
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, alloc->allocate(0), alloc, /*resizable=*/true);
  return at::cpu::set_(self, storage, 0, {0}, {});
}

const at::Tensor& resize(const at::Tensor& self, c10::IntArrayRef size,
                         std::optional<c10::MemoryFormat> memory_format) {
  for (int64_t s : size) TORCH_CHECK(s >= 0, "resize_: negative size ", s, " in ", size);
  auto* impl = self.unsafeGetTensorImpl();
  int64_t needed = static_cast<int64_t>(
      at::detail::computeStorageNbytesContiguous(size, self.element_size(), self.storage_offset()));
  if (needed > static_cast<int64_t>(self.storage().nbytes())) {
    // The allocator's copy_data moves the old bytes on the device.
    device::resize_storage_bytes(self.storage(), static_cast<size_t>(needed));
  }
  impl->set_sizes_contiguous(size);
  auto fmt = memory_format.value_or(c10::MemoryFormat::Contiguous);
  if (fmt != c10::MemoryFormat::Preserve) impl->empty_tensor_restride(fmt);
  return self;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("as_strided", as_strided);
  m.impl("view", TORCH_FN(at::native::view));
  // Complex storages read as (real, imag) pairs: the view lowering handles
  // the reinterpretation.
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("set_.source_Storage", set_storage);
  m.impl("set_.source_Storage_storage_offset", set_storage_offset);
  m.impl("set_.source_Tensor", set_tensor);
  m.impl("set_", set_empty);
  m.impl("resize_", resize);
}

}  // namespace
}  // namespace torch_tpu::eager
