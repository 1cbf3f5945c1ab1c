// The `tpu` allocator: hands out unique virtual addresses (never dereferenced)
// whose context is a StorageSlot, and keeps PyTorch-style memory statistics.
#pragma once
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

#include <cstdint>
#include <utility>

namespace torch_tpu::device {

struct MemoryStats {
  int64_t allocated = 0;       // bytes of live storages
  int64_t peak_allocated = 0;
  int64_t num_allocs = 0;
  int64_t num_frees = 0;
  int64_t live_allocs = 0;            // storages alive now
  int64_t bytes_allocated_total = 0;  // over the process (since the last reset of accumulated stats)
  int64_t bytes_freed_total = 0;
};

// A DeviceAllocator, so torch.accelerator.memory_* work. It caches nothing:
// a freed storage drops its PJRT buffer at once, so reserved == allocated,
// emptyCache has nothing to release, and recordStream has nothing to delay
// (one stream per device, ordered by PJRT).
class TpuAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override;
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  // Called by storage resizes: copies the first `count` bytes on the device.
  void copy_data(void* dest, const void* src, size_t count) const override;

  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t) override {}
  void recordStream(const c10::DataPtr&, c10::Stream) override {}
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override;
};

TpuAllocator* tpu_allocator();
// Grows or shrinks a tpu storage; its first min(old, new) bytes are kept.
void resize_storage_bytes(const c10::Storage& storage, size_t nbytes);

// Whether `p` came from TpuAllocator::allocate (its context is then a StorageSlot).
bool made_by_tpu_allocator(const c10::DataPtr& p);
MemoryStats memory_stats(int device_index);
// (free, total) bytes: the plugin's figures when it reports a limit, else the
// host's (the CPU plugin's device memory is host memory).
std::pair<int64_t, int64_t> memory_info(int device_index);
void reset_peak_memory_stats(int device_index);

}  // namespace torch_tpu::device
