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

// Two generations, an approximate LRU: a value used again within the last
// two generations stays; values that change every step (Adam's bias
// corrections) pass through without growing it. Bounded by 2 * kGeneration.
constexpr size_t kGeneration = 128;
using Map = std::unordered_map<Key, std::shared_ptr<pjrt::Buffer>, KeyHash>;

std::mutex mutex;
// Leaked on purpose: their buffers must not be destroyed after the PJRT client at exit.
Map* recent = new Map();
Map* older = new Map();

}  // namespace

std::shared_ptr<pjrt::Buffer> cached_scalar_buffer(const RuntimeScalar& s, int device_index) {
  Key key{device_index, s.dtype, s.bytes};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = recent->find(key);
    if (it != recent->end()) return it->second;
    it = older->find(key);
    if (it != older->end()) {
      auto b = it->second;
      older->erase(it);
      recent->emplace(key, b);
      return b;
    }
  }
  std::shared_ptr<pjrt::Buffer> b = device::upload(s.bytes.data(), hlo::TensorType(s.dtype, {}), device_index);
  std::vector<std::shared_ptr<pjrt::Buffer>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (recent->size() >= kGeneration) {
      for (auto& e : *older) dropped.push_back(std::move(e.second));
      older->clear();
      std::swap(recent, older);
    }
    recent->emplace(key, b);
  }
  // Queued programs may still read them.
  for (auto& d : dropped) device::retire_after_queued_work(std::move(d));
  return b;
}

}  // namespace torch_tpu::eager
