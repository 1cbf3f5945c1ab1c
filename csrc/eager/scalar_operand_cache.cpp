#include "eager/scalar_operand_cache.h"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "device/runtime.h"

namespace torch_tpu::eager {
namespace {

struct Key {
  int device;
  hlo::DType dtype;
  std::array<uint8_t, 16> bytes;
  bool operator==(const Key& o) const { return device == o.device && dtype == o.dtype && bytes == o.bytes; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t lo, hi;
    std::memcpy(&lo, k.bytes.data(), 8);
    std::memcpy(&hi, k.bytes.data() + 8, 8);
    return std::hash<uint64_t>()(lo * 0x9E3779B97F4A7C15ull ^ hi ^ (uint64_t(k.device) << 40) ^
                                 (uint64_t(k.dtype) << 48));
  }
};

// Values that change every call (a decaying learning rate) would grow it
// without bound: past the limit it starts over, which costs one upload each.
constexpr size_t kMaxEntries = 4096;

std::mutex mutex;
// Leaked on purpose: its buffers must not be destroyed after the PJRT client at exit.
auto* entries = new std::unordered_map<Key, std::shared_ptr<pjrt::Buffer>, KeyHash>();

}  // namespace

std::shared_ptr<pjrt::Buffer> cached_scalar_buffer(const RuntimeScalar& s, int device_index) {
  Key key{device_index, s.dtype, s.bytes};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries->find(key);
    if (it != entries->end()) return it->second;
  }
  std::shared_ptr<pjrt::Buffer> b = device::upload(s.bytes.data(), hlo::TensorType(s.dtype, {}), device_index);
  std::vector<std::shared_ptr<pjrt::Buffer>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (entries->size() >= kMaxEntries) {
      for (auto& e : *entries) dropped.push_back(std::move(e.second));
      entries->clear();
    }
    entries->emplace(key, b);
  }
  // Queued programs may still read them.
  for (auto& d : dropped) device::retire_after_queued_work(std::move(d));
  return b;
}

}  // namespace torch_tpu::eager
