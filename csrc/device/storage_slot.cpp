#include "device/storage_slot.h"

#include <c10/util/Exception.h>

#include "device/allocator.h"
#include "device/runtime.h"

namespace torch_tpu::device {

namespace {
FusedFlushFn fused_flush = nullptr;
FusedReleaseFn fused_release = nullptr;
}  // namespace

void set_fused_window_hooks(FusedFlushFn flush, FusedReleaseFn release) {
  fused_flush = flush;
  fused_release = release;
}

void flush_fused_window() {
  if (fused_flush) fused_flush();
}

void StorageSlot::check_not_failed() const {
  TORCH_CHECK(failure.empty(), "torch_tpu: this tpu tensor's contents are lost: ", failure);
}

void StorageSlot::flush_fused_window() { device::flush_fused_window(); }

void StorageSlot::set(std::shared_ptr<pjrt::Buffer> b, const hlo::TensorType& l, std::string op) {
  settle();  // a write from outside the window lands after the window's own
  if (buffer_) retire_after_queued_work(std::move(buffer_));
  buffer_ = std::move(b);
  failure.clear();
  layout = l;
  producer = std::move(op);
}

StorageSlot::~StorageSlot() {
  if (in_fused_window && fused_release) {
    fused_release(*this, std::move(buffer_));
    return;
  }
  if (buffer_) retire_after_queued_work(std::move(buffer_));
}

StorageSlot& slot_of(const c10::Storage& storage) {
  TORCH_CHECK(storage.device_type() == c10::DeviceType::PrivateUse1,
              "torch_tpu: expected a tpu storage, got one on ", storage.device());
  const c10::DataPtr& p = storage.data_ptr();
  if (made_by_tpu_allocator(p)) return *static_cast<StorageSlot*>(p.get_context());
  // A storage made elsewhere over tpu memory (at::from_blob of a data_ptr, as
  // PyTorch's legacy serialization and pickle do): it aliases the allocation
  // that starts at its address, while that allocation lives.
  StorageSlot* slot = slot_at(p.get());
  TORCH_CHECK(slot && slot->address == p.get() && storage.nbytes() <= slot->nbytes,
              "torch_tpu: a tpu storage of ", storage.nbytes(), " bytes at ", p.get(),
              " is not a live tpu allocation or its start (only whole allocations can be wrapped)");
  return *slot;
}

}  // namespace torch_tpu::device
