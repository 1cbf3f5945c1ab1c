#include "device/allocator.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "device/runtime.h"
#include "device/storage_slot.h"
#include "pjrt/device.h"

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
    s.live_allocs -= 1;
    s.bytes_freed_total += static_cast<int64_t>(slot->nbytes);
  }
  delete slot;
}

}  // namespace

c10::DataPtr TpuAllocator::allocate(size_t nbytes) {
  int device_index = current_device();
  auto* slot = new StorageSlot();
  slot->nbytes = nbytes;
  slot->device_index = device_index;
  slot->layout.dims.assign(1, static_cast<int64_t>(nbytes));  // U8 [nbytes], in the default layout's vector
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
    s.live_allocs += 1;
    s.bytes_allocated_total += static_cast<int64_t>(nbytes);
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

bool made_by_tpu_allocator(const c10::DataPtr& p) { return p.get_deleter() == &delete_slot; }

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

std::pair<int64_t, int64_t> memory_info(int device_index) {
  const pjrt::Device& d = pjrt_device(device_index);
  if (auto s = d.memory_stats(); s && s->bytes_limit) return {*s->bytes_limit - s->bytes_in_use, *s->bytes_limit};
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  int64_t total = 0, avail = 0;
  while (std::getline(meminfo, line)) {
    std::istringstream ss(line);
    std::string name;
    int64_t kb = 0;
    ss >> name >> kb;
    if (name == "MemTotal:") total = kb * 1024;
    if (name == "MemAvailable:") avail = kb * 1024;
  }
  return {avail, total};
}

c10::CachingDeviceAllocator::DeviceStats TpuAllocator::getDeviceStats(c10::DeviceIndex device) {
  MemoryStats m = memory_stats(device);
  c10::CachingDeviceAllocator::DeviceStats d;
  auto fill = [](c10::CachingDeviceAllocator::StatArray& a, int64_t current, int64_t peak, int64_t in, int64_t out) {
    for (auto& s : a) s.current = current, s.peak = peak, s.allocated = in, s.freed = out;
  };
  for (auto* a : {&d.allocated_bytes, &d.reserved_bytes, &d.active_bytes, &d.requested_bytes})
    fill(*a, m.allocated, m.peak_allocated, m.bytes_allocated_total, m.bytes_freed_total);
  for (auto* a : {&d.allocation, &d.segment, &d.active})
    fill(*a, m.live_allocs, m.live_allocs, m.num_allocs, m.num_frees);
  return d;
}

void TpuAllocator::resetAccumulatedStats(c10::DeviceIndex device) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  MemoryStats& s = stats().at(device);
  s.num_frees = 0;
  s.num_allocs = 0;
  s.bytes_allocated_total = 0;
  s.bytes_freed_total = 0;
}

void TpuAllocator::resetPeakStats(c10::DeviceIndex device) { reset_peak_memory_stats(device); }

std::pair<size_t, size_t> TpuAllocator::getMemoryInfo(c10::DeviceIndex device) {
  auto [free, total] = memory_info(device);
  return {static_cast<size_t>(free), static_cast<size_t>(total)};
}

}  // namespace torch_tpu::device
