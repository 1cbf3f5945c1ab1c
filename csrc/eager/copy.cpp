// Copies between host and device and between tpu tensors (DESIGN.md §3):
// whole-storage transfers move the buffer as is; anything else goes through
// a program that reads or writes the view.
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/_neg_view.h>
#include <ATen/ops/conj_physical.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/neg.h>
#include <torch/library.h>

#include <mutex>
#include <unordered_map>

#include "device/runtime.h"
#include "device/storage_slot.h"
#include "eager/buffer_trace.h"
#include "eager/dtype_map.h"
#include "eager/executor.h"
#include "eager/host_index_checks.h"
#include "eager/metrics.h"
#include "eager/op_plan.h"
#include "eager/program_cache.h"
#include "ops/view_lowering.h"
#include "pjrt/executable.h"

namespace torch_tpu::eager {

using ops::classify_view;
using ops::read_view;
using ops::ViewAccess;
using ops::ViewGeometry;
using ops::write_view;
namespace {

using device::StorageSlot;

bool is_tpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// True when `t` covers its whole storage densely: it can take the storage's
// buffer as is (and give it its own shape).
bool covers_storage(const at::Tensor& t) {
  return t.is_contiguous() && static_cast<size_t>(t.numel()) * t.element_size() == t.storage().nbytes();
}

// A tpu tensor holding `src` (a dense CPU tensor) as its whole storage.
at::Tensor upload_dense(const at::Tensor& src, int device_index) {
  at::Tensor t = new_tpu_tensor(src.scalar_type(), src.sizes(), ops::contiguous_strides(src.sizes().vec()), device_index);
  hlo::TensorType type(to_hlo(src.scalar_type(), "copy_"), src.sizes().vec());
  device::slot_of(*t.unsafeGetTensorImpl()).set(device::upload(src.const_data_ptr(), type, device_index), type,
                                                 "copy_");
  count_transfer(static_cast<int64_t>(src.nbytes()), 0);
  return t;
}

// tpu -> tpu: read the source view, convert, broadcast, write the destination view.
void copy_on_device(const at::Tensor& src, const at::Tensor& dst) {
  Invocation inv;
  inv.op = "copy_";
  inv.inputs = {src};
  inv.targets = {dst};
  inv.device_index = dst.device().index();
  hlo::TensorType out(to_hlo(dst.scalar_type(), "copy_"), dst.sizes().vec());
  inv.lower = [out](hlo::Builder& b, const std::vector<hlo::Value>& t, const std::vector<hlo::Value>&) {
    return std::vector<hlo::Value>{b.broadcast_to(b.convert(t[0], out.dtype), out.dims)};
  };
  execute(inv);
}

// The values of a tpu tensor as a CPU tensor of the same dtype and sizes.
at::Tensor download(const at::Tensor& src) {
  StorageSlot* slot = &device::slot_of(*src.unsafeGetTensorImpl());
  at::Tensor whole = src;
  ViewGeometry view{to_hlo(src.scalar_type(), "copy_"), src.sizes().vec(), src.strides().vec()};
  if (classify_view(slot->layout, view) != ViewAccess::Whole) {
    Invocation inv;
    inv.op = "copy_";
    inv.inputs = {src};
    inv.device_index = src.device().index();
    inv.infer_fresh = [&]() {
      return std::vector<FreshOutput>{
          FreshOutput{src.scalar_type(), src.sizes().vec(), ops::contiguous_strides(src.sizes().vec())}};
    };
    inv.lower = [](hlo::Builder&, const std::vector<hlo::Value>& t, const std::vector<hlo::Value>&) {
      return std::vector<hlo::Value>{t[0]};
    };
    whole = execute(inv).at(0);
    slot = &device::slot_of(*whole.unsafeGetTensorImpl());
  }
  at::Tensor host = at::empty(slot->layout.dims, at::TensorOptions().dtype(to_scalar_type(slot->layout.dtype)));
  device::download(*slot, host.mutable_data_ptr(), host.nbytes());
  count_transfer(0, static_cast<int64_t>(host.nbytes()));
  return host.view(src.sizes());
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  (void)non_blocking;  // device work is asynchronous anyway; host reads always wait
  if (dst.numel() == 0) return dst;
  // PyTorch routes tpu copies here before it resolves lazy conjugate and
  // negative views, so this does: the source is materialized, and a
  // conjugate/negative destination view receives the transformed values.
  if (dst.is_conj()) return copy_from(self.conj(), dst.conj(), non_blocking);
  if (dst.is_neg()) return copy_from(self._neg_view(), dst._neg_view(), non_blocking);
  if (self.is_conj()) return copy_from(at::conj_physical(self.conj()), dst, non_blocking);
  if (self.is_neg()) return copy_from(at::neg(self._neg_view()), dst, non_blocking);
  if (self.is_complex() && !dst.is_complex())
    TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");  // as the CPU's copy_
  // ... and one that writes a location twice (an expanded tensor).
  if (is_tpu(dst)) at::assert_no_internal_overlap(dst);
  if (is_tpu(dst) && !is_tpu(self)) {
    at::Tensor src = self.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
    int index = dst.device().index();
    if (covers_storage(dst)) {
      hlo::TensorType type(to_hlo(dst.scalar_type(), "copy_"), dst.sizes().vec());
      device::slot_of(*dst.unsafeGetTensorImpl()).set(device::upload(src.const_data_ptr(), type, index), type,
                                                       "copy_");
      remember_uploaded_values(dst, src);  // x[[0, 5]]: its bounds are checked on the host
      count_transfer(static_cast<int64_t>(src.nbytes()), 0);
    } else {
      copy_on_device(upload_dense(src, index), dst);
    }
    return dst;
  }
  if (is_tpu(self) && !is_tpu(dst)) {
    dst.copy_(download(self));
    return dst;
  }
  TORCH_CHECK(is_tpu(self) && is_tpu(dst), "copy_: unexpected devices ", self.device(), " -> ", dst.device());
  // The CPU's copy_ (its TensorIterator) refuses a destination that shares
  // only some locations with the source (x[1:] = x[:-1]); ATen hands tpu
  // copies here before it checks.
  at::assert_no_partial_overlap(dst, self);
  if (self.device() != dst.device()) {
    copy_on_device(upload_dense(download(self).contiguous(), dst.device().index()), dst);
  } else {
    copy_on_device(self, dst);
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

// Storage growth: the first `count` bytes of `src` into a fresh `dst`.
void copy_storage_bytes(StorageSlot& dst, StorageSlot& src, size_t count) {
  if (count == 0) return;
  src.settle();  // its layout and buffer as they are after deferred work
  static auto* programs = new ProgramCache<pjrt::Executable>();
  hlo::TensorType out(hlo::DType::U8, {static_cast<int64_t>(dst.nbytes)});
  std::string key = src.layout.str() + "|" + std::to_string(count) + "|" + out.str();
  std::shared_ptr<pjrt::Executable> exe = programs->find(key);
  if (!exe) {
    hlo::Builder b;
    hlo::Value base = b.parameter(src.layout);
    hlo::Value zero = b.constant_int(hlo::DType::I64, 0);
    ViewGeometry bytes{hlo::DType::U8, {static_cast<int64_t>(count)}, {1}};
    hlo::Value head = read_view(b, base, bytes, zero);
    hlo::Value full = b.pad(head, b.constant_int(hlo::DType::U8, 0), {0}, {out.dims[0] - head.type.dims[0]}, {0});
    exe = compile_program(b.finish({full}), "resize_", "resize_ (storage growth)");
    count_evictions(programs->insert(key, exe));
  }
  std::shared_ptr<pjrt::Buffer>& buffer = src.raw_buffer();
  if (!buffer) buffer = device::zeros_buffer(src.layout, src.device_index);
  std::vector<const void*> traced = traced_addresses({buffer.get()});
  auto r = exe->execute({buffer.get()}, device::pjrt_device(dst.device_index));
  trace_run("resize_", traced, r.outputs);
  device::track_completion(std::move(r.done), "resize_", dst.device_index);  // before dst lets its buffer go
  dst.set(r.outputs.at(0), out, "resize_");
}

struct RegisterCopyBytes {
  RegisterCopyBytes() { device::set_copy_storage_bytes(&copy_storage_bytes); }
} register_copy_bytes;

// _copy_from must see conjugate/negative views as they are (copy_from
// resolves them): through the Conjugate/Negative fallbacks, which clone their
// input with copy_, it would recurse without end.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) { m.impl("_copy_from", torch::CppFunction::makeFallthrough()); }
TORCH_LIBRARY_IMPL(aten, Negative, m) { m.impl("_copy_from", torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
}

}  // namespace

at::Tensor to_host(const at::Tensor& src) { return download(src); }

}  // namespace torch_tpu::eager
