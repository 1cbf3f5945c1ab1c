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
  // True while a fused eager window (eager/fused_window.h) reads or writes
  // this storage: its buffer is then not yet current (`layout` already is).
  bool in_fused_window = false;
  int fused_storage = -1;  // while in_fused_window: its number among the window's storages
  // Set when the deferred work that was to write this storage failed: its
  // contents are unknown, so every later read raises this (a write clears it).
  std::string failure;
  // The op whose program produced `buffer`: named when its asynchronous error surfaces.
  std::string producer;
  void* address = nullptr;  // the virtual data_ptr handed out for this storage

  // The buffer replaced (or, at destruction, dropped) may still be read by
  // programs queued earlier: it is retired (runtime.h), not destroyed at once.
  void set(std::shared_ptr<pjrt::Buffer> b, const hlo::TensorType& l, std::string op);
  // The current buffer (null until the first write: reading never-written
  // memory gives zeros). Deferred work on this storage runs first.
  const std::shared_ptr<pjrt::Buffer>& buffer() {
    settle();
    check_not_failed();
    return buffer_;
  }
  void check_not_failed() const;
  // Runs the fused window that touches this storage, if any.
  void settle() {
    if (in_fused_window) flush_fused_window();
  }
  // The buffer as it is now, without running deferred work: for the
  // executors, which account for the window themselves.
  std::shared_ptr<pjrt::Buffer>& raw_buffer() { return buffer_; }
  StorageSlot() = default;
  StorageSlot(const StorageSlot&) = delete;
  StorageSlot& operator=(const StorageSlot&) = delete;
  ~StorageSlot();

 private:
  static void flush_fused_window();
  std::shared_ptr<pjrt::Buffer> buffer_;
};

// Installed by the fused eager window (the device layer cannot see it):
// `flush` runs the pending window; `release` is told of a storage that dies
// while the window still needs its buffer, and takes that buffer.
using FusedFlushFn = void (*)();
using FusedReleaseFn = void (*)(StorageSlot& slot, std::shared_ptr<pjrt::Buffer> buffer);
void set_fused_window_hooks(FusedFlushFn flush, FusedReleaseFn release);
// Runs the pending fused window, if any (synchronization points call it).
void flush_fused_window();

// The slot of a `tpu` storage (throws for storages of other devices).
StorageSlot& slot_of(const c10::Storage& storage);
inline StorageSlot& slot_of(const c10::TensorImpl& t) { return slot_of(t.unsafe_storage()); }

// The slot whose allocation contains `address` (nullptr when none does).
StorageSlot* slot_at(const void* address);

}  // namespace torch_tpu::device
