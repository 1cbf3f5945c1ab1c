// A `tpu` storage is a slot holding one immutable PJRT buffer (DESIGN.md §3).
// Writes replace the buffer; every view of the storage sees the new one.
#pragma once
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>

#include <memory>
#include <string>

#include "hlo/tensor_type.h"
#include "pjrt/buffer.h"

namespace torch_tpu::device {

struct StorageSlot {
  size_t nbytes = 0;
  int device_index = 0;
  // Shape of the buffer: the shape of the tensor that created the storage
  // (1-D bytes for raw storage). Kept so whole-storage tensors need no view code.
  hlo::TensorType layout{hlo::DType::U8, {0}};
  // Null until the first write: reading never-written memory gives zeros.
  std::shared_ptr<pjrt::Buffer> buffer;
  // The op whose program produced `buffer`: named when its asynchronous error surfaces.
  std::string producer;
  void* address = nullptr;  // the virtual data_ptr handed out for this storage

  // The buffer replaced (or, at destruction, dropped) may still be read by
  // programs queued earlier: it is retired (runtime.h), not destroyed at once.
  void set(std::shared_ptr<pjrt::Buffer> b, const hlo::TensorType& l, std::string op);
  StorageSlot() = default;
  StorageSlot(const StorageSlot&) = delete;
  StorageSlot& operator=(const StorageSlot&) = delete;
  ~StorageSlot();
};

// The slot of a `tpu` storage (throws for storages of other devices).
StorageSlot& slot_of(const c10::Storage& storage);
inline StorageSlot& slot_of(const c10::TensorImpl& t) { return slot_of(t.unsafe_storage()); }

// The slot whose allocation contains `address` (nullptr when none does).
StorageSlot* slot_at(const void* address);

}  // namespace torch_tpu::device
