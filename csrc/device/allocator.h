// The `tpu` allocator: hands out unique virtual addresses (never dereferenced)
// whose context is a StorageSlot, and keeps PyTorch-style memory statistics.
#pragma once
#include <c10/core/Allocator.h>
#include <c10/core/Storage.h>

#include <cstdint>

namespace torch_tpu::device {

struct MemoryStats {
  int64_t allocated = 0;       // bytes of live storages
  int64_t peak_allocated = 0;
  int64_t num_allocs = 0;
  int64_t num_frees = 0;
};

class TpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override;
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  // Called by storage resizes: copies the first `count` bytes on the device.
  void copy_data(void* dest, const void* src, size_t count) const override;
};

TpuAllocator* tpu_allocator();
// Grows or shrinks a tpu storage; its first min(old, new) bytes are kept.
void resize_storage_bytes(const c10::Storage& storage, size_t nbytes);
MemoryStats memory_stats(int device_index);
void reset_peak_memory_stats(int device_index);

}  // namespace torch_tpu::device
