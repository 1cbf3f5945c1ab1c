#include "device/allocator.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "device/runtime.h"
#include "device/storage_slot.h"

namespace torch_tpu::device {

namespace {

// Virtual addresses start high and never repeat, so data_ptr() values are
// unique for the life of the process and PyTorch's aliasing checks hold.
constexpr uintptr_t kAddressBase = uintptr_t{1} << 44;
constexpr uintptr_t kAlignment = 256;
std::atomic<uintptr_t> next_address{kAddressBase};

std::mutex registry_mutex;
std::map<uintptr_t, StorageSlot*>& registry() {
  static auto* m = new std::map<uintptr_t, StorageSlot*>();  // leaked: outlives static dtors
  return *m;
}
std::vector<MemoryStats>& stats() {
  static auto* s = new std::vector<MemoryStats>(64);
  return *s;
}

void delete_slot(void* ctx) {
  auto* slot = static_cast<StorageSlot*>(ctx);
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    registry().erase(reinterpret_cast<uintptr_t>(slot->address));
    MemoryStats& s = stats().at(slot->device_index);
    s.allocated -= static_cast<int64_t>(slot->nbytes);
    s.num_frees += 1;
  }
  delete slot;
}

}  // namespace

c10::DataPtr TpuAllocator::allocate(size_t nbytes) {
  int device_index = current_device();
  auto* slot = new StorageSlot();
  slot->nbytes = nbytes;
  slot->device_index = device_index;
  slot->layout = hlo::TensorType(hlo::DType::U8, {static_cast<int64_t>(nbytes)});
  uintptr_t span = (std::max<size_t>(nbytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  uintptr_t addr = next_address.fetch_add(span);
  slot->address = reinterpret_cast<void*>(addr);
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    registry()[addr] = slot;
    MemoryStats& s = stats().at(device_index);
    s.allocated += static_cast<int64_t>(nbytes);
    s.peak_allocated = std::max(s.peak_allocated, s.allocated);
    s.num_allocs += 1;
  }
  return c10::DataPtr(slot->address, slot, &delete_slot,
                      c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device_index)));
}

void TpuAllocator::copy_data(void* dest, const void* src, size_t count) const {
  StorageSlot* d = slot_at(dest);
  StorageSlot* s = slot_at(src);
  TORCH_CHECK(d && s, "torch_tpu: copy_data between addresses not owned by the tpu allocator");
  copy_storage_bytes(*d, *s, count);
}

StorageSlot* slot_at(const void* address) {
  auto a = reinterpret_cast<uintptr_t>(address);
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto it = registry().upper_bound(a);
  if (it == registry().begin()) return nullptr;
  --it;
  StorageSlot* slot = it->second;
  return a < it->first + std::max<size_t>(slot->nbytes, 1) ? slot : nullptr;
}

void resize_storage_bytes(const c10::Storage& storage, size_t nbytes) {
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  size_t old = storage.nbytes();
  if (nbytes == old) return;
  auto* impl = storage.unsafeGetStorageImpl();
  int saved = current_device();
  set_current_device(storage.device().index());
  c10::DataPtr fresh = tpu_allocator()->allocate(nbytes);
  set_current_device(saved);
  size_t keep = std::min(old, nbytes);
  if (keep > 0) tpu_allocator()->copy_data(fresh.get(), storage.data(), keep);
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(nbytes);
}

TpuAllocator* tpu_allocator() {
  static TpuAllocator allocator;
  return &allocator;
}

MemoryStats memory_stats(int device_index) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  return stats().at(device_index);
}

void reset_peak_memory_stats(int device_index) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  MemoryStats& s = stats().at(device_index);
  s.peak_allocated = s.allocated;
}

}  // namespace torch_tpu::device
