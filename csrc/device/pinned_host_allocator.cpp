#include "device/pinned_host_allocator.h"

#include <c10/core/CPUAllocator.h>

#include <cstring>
#include <map>
#include <mutex>

namespace torch_tpu::device {
namespace {

std::mutex ranges_mutex;
std::map<uintptr_t, size_t>& ranges() {  // start -> size of each live allocation
  static auto* m = new std::map<uintptr_t, size_t>();
  return *m;
}

// The context of a pinned DataPtr: the CPU allocation it wraps.
struct Pinned {
  c10::DataPtr cpu;
  size_t size;
};

void free_pinned(void* ctx) {
  auto* p = static_cast<Pinned*>(ctx);
  if (p->cpu.get()) {
    std::lock_guard<std::mutex> lock(ranges_mutex);
    ranges().erase(reinterpret_cast<uintptr_t>(p->cpu.get()));
  }
  delete p;
}

struct PinnedHostAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    auto* p = new Pinned{c10::GetCPUAllocator()->allocate(nbytes), nbytes};
    void* data = p->cpu.get();
    if (data) {
      std::lock_guard<std::mutex> lock(ranges_mutex);
      ranges()[reinterpret_cast<uintptr_t>(data)] = nbytes;
    }
    return c10::DataPtr(data, p, &free_pinned, c10::Device(c10::kCPU));
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, size_t count) const override { std::memcpy(dest, src, count); }
};

}  // namespace

c10::Allocator* pinned_host_allocator() {
  static PinnedHostAllocator allocator;
  return &allocator;
}

bool is_pinned_host_pointer(const void* p) {
  auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(ranges_mutex);
  auto it = ranges().upper_bound(a);
  if (it == ranges().begin()) return false;
  --it;
  return a < it->first + std::max<size_t>(it->second, 1);
}

}  // namespace torch_tpu::device
