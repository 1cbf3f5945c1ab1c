#include "device/storage_slot.h"

#include <c10/util/Exception.h>

#include "device/allocator.h"

namespace torch_tpu::device {

StorageSlot& slot_of(const c10::Storage& storage) {
  TORCH_CHECK(storage.device_type() == c10::DeviceType::PrivateUse1,
              "torch_tpu: expected a tpu storage, got one on ", storage.device());
  auto* slot = static_cast<StorageSlot*>(storage.data_ptr().get_context());
  TORCH_CHECK(slot != nullptr, "torch_tpu: a tpu storage without a slot (not made by the tpu allocator)");
  return *slot;
}

}  // namespace torch_tpu::device
