// empty / empty_strided: storage from the tpu allocator, nothing touched on
// the device (DESIGN.md: `empty` touches nothing); _efficientzerotensor.
#include <ATen/EmptyTensor.h>
#include <ATen/ops/tril_indices.h>
#include <ATen/ops/triu_indices.h>

#include <algorithm>
#include <c10/core/TensorOptions.h>
#include <torch/library.h>

#include "device/runtime.h"
#include "eager/float64_rule.h"
#include "eager/dtype_map.h"
#include "eager/executor.h"
#include "ops/view_lowering.h"

namespace torch_tpu::eager {
namespace {

int device_index_of(std::optional<c10::Device> device) {
  c10::Device d = c10::device_or_default(device);
  TORCH_CHECK(d.type() == c10::DeviceType::PrivateUse1, "expected a tpu device, got ", d);
  int index = d.has_index() ? d.index() : device::current_device();
  device::pjrt_device(index);  // starts the runtime and checks the index
  return index;
}

void check_options(std::optional<c10::Layout> layout, std::optional<bool> pin_memory, const char* op) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided, op,
              ": only strided tensors are supported on tpu, got layout ", c10::layout_or_default(layout));
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory), op, ": pin_memory applies to CPU tensors only");
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  check_options(layout, pin_memory, "empty");
  int index = device_index_of(device);
  c10::ScalarType st = c10::dtype_or_default(dtype);
  to_hlo(st, "empty");
  check_float64_rule(st, "empty");
  for (int64_t s : size) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  auto fmt = memory_format.value_or(c10::MemoryFormat::Contiguous);
  at::Tensor t = new_tpu_tensor(st, size, ops::contiguous_strides(size.vec()), index);
  if (fmt != c10::MemoryFormat::Contiguous && fmt != c10::MemoryFormat::Preserve) {
    t.unsafeGetTensorImpl()->empty_tensor_restride(fmt);
    return new_tpu_tensor(st, size, t.strides(), index);  // base shape follows the new strides
  }
  return t;
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  check_options(layout, pin_memory, "empty_strided");
  int index = device_index_of(device);
  c10::ScalarType st = c10::dtype_or_default(dtype);
  to_hlo(st, "empty_strided");
  check_float64_rule(st, "empty_strided");
  TORCH_CHECK(size.size() == stride.size(), "empty_strided: mismatch in length of strides and shape");
  for (int64_t s : size) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  return new_tpu_tensor(st, size, stride, index);
}

// Autograd's zero gradients (sgn, abs at 0, ...): the CPU returns a storage-less
// ZeroTensor; a plain zero tensor is the same value to every op.
at::Tensor efficient_zero_tensor(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                 std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                 std::optional<bool> pin_memory) {
  return empty_memory_format(size, dtype, layout, device, pin_memory, std::nullopt).zero_();
}

// tril_indices / triu_indices: the CPU's argument checks and pair count, then
// the out= form, whose lowering computes the pairs (ops/tri_indices.cpp).
at::Tensor tri_indices(bool upper, int64_t row, int64_t col, int64_t offset, std::optional<c10::ScalarType> dtype,
                       std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                       std::optional<bool> pin_memory) {
  const char* op = upper ? "triu_indices" : "tril_indices";
  check_options(layout, pin_memory, op);
  TORCH_CHECK(row >= 0, "row must be non-negative, got", row);
  TORCH_CHECK(col >= 0, "col must be non-negative, got", col);
  c10::ScalarType st = dtype.value_or(c10::kLong);
  TORCH_CHECK_NOT_IMPLEMENTED(st == c10::kLong || st == c10::kInt, "\"", op, "\" not implemented for '",
                              c10::toString(st), "'");
  int64_t n = 0;
  for (int64_t i = 0; i < row; ++i) {
    int64_t in_row = upper ? col - std::max<int64_t>(0, i + offset) : std::min<int64_t>(col, i + offset + 1);
    n += std::max<int64_t>(0, std::min<int64_t>(col, in_row));
  }
  at::Tensor out = empty_memory_format({2, n}, st, std::nullopt, device, std::nullopt, std::nullopt);
  return upper ? at::triu_indices_out(out, row, col, offset) : at::tril_indices_out(out, row, col, offset);
}
at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<c10::ScalarType> dtype,
                        std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                        std::optional<bool> pin_memory) {
  return tri_indices(false, row, col, offset, dtype, layout, device, pin_memory);
}
at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<c10::ScalarType> dtype,
                        std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                        std::optional<bool> pin_memory) {
  return tri_indices(true, row, col, offset, dtype, layout, device, pin_memory);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("_efficientzerotensor", efficient_zero_tensor);
  m.impl("tril_indices", tril_indices);
  m.impl("triu_indices", triu_indices);
}

}  // namespace
}  // namespace torch_tpu::eager
