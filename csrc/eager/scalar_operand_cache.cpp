#include "eager/scalar_operand_cache.h"

#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "device/runtime.h"

namespace torch_tpu::eager {
namespace {

struct ScalarKey {
  int device;
  hlo::DType dtype;
  std::array<uint8_t, 16> bytes;
  bool operator==(const ScalarKey& o) const { return device == o.device && dtype == o.dtype && bytes == o.bytes; }
};
struct ScalarKeyHash {
  size_t operator()(const ScalarKey& k) const {
    uint64_t lo, hi;
    std::memcpy(&lo, k.bytes.data(), 8);
    std::memcpy(&hi, k.bytes.data() + 8, 8);
    return std::hash<uint64_t>()(lo * 0x9E3779B97F4A7C15ull ^ hi ^ (uint64_t(k.device) << 40) ^
                                 (uint64_t(k.dtype) << 48));
  }
};

struct ArrayKey {
  int device;
  hlo::DType dtype;
  std::string bytes;  // the elements; the count follows from the dtype
  bool operator==(const ArrayKey& o) const { return device == o.device && dtype == o.dtype && bytes == o.bytes; }
};
struct ArrayKeyHash {
  size_t operator()(const ArrayKey& k) const {
    return std::hash<std::string_view>()(k.bytes) ^ (uint64_t(k.device) << 40) ^ (uint64_t(k.dtype) << 48);
  }
};

// Two generations, an approximate LRU: a value used again within the last
// two generations stays; values that change every step (Adam's bias
// corrections) pass through without growing it. Bounded by 2 * kGeneration.
template <typename Key, typename Hash>
class Generations {
 public:
  template <typename Upload>
  std::shared_ptr<pjrt::Buffer> get(const Key& key, Upload upload) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = recent_->find(key);
      if (it != recent_->end()) return it->second;
      it = older_->find(key);
      if (it != older_->end()) {
        auto b = it->second;
        older_->erase(it);
        recent_->emplace(key, b);
        return b;
      }
    }
    std::shared_ptr<pjrt::Buffer> b = upload();
    std::vector<std::shared_ptr<pjrt::Buffer>> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (recent_->size() >= kGeneration) {
        for (auto& e : *older_) dropped.push_back(std::move(e.second));
        older_->clear();
        std::swap(recent_, older_);
      }
      recent_->emplace(key, b);
    }
    // Queued programs may still read them.
    for (auto& d : dropped) device::retire_after_queued_work(std::move(d));
    return b;
  }

 private:
  static constexpr size_t kGeneration = 128;
  using Map = std::unordered_map<Key, std::shared_ptr<pjrt::Buffer>, Hash>;
  std::mutex mutex_;
  // Leaked on purpose (as is each cache): their buffers must not be destroyed after the PJRT client at exit.
  Map* recent_ = new Map();
  Map* older_ = new Map();
};

auto* scalars = new Generations<ScalarKey, ScalarKeyHash>();
auto* arrays = new Generations<ArrayKey, ArrayKeyHash>();

}  // namespace

std::shared_ptr<pjrt::Buffer> cached_scalar_buffer(const RuntimeScalar& s, int device_index) {
  return scalars->get(ScalarKey{device_index, s.dtype, s.bytes}, [&] {
    return device::upload(s.bytes.data(), hlo::TensorType(s.dtype, {}), device_index);
  });
}

std::shared_ptr<pjrt::Buffer> cached_array_buffer(std::string bytes, hlo::DType dtype, int device_index) {
  int64_t n = static_cast<int64_t>(bytes.size()) / hlo::dtype_bytes(dtype);
  ArrayKey key{device_index, dtype, std::move(bytes)};
  return arrays->get(key, [&] { return device::upload(key.bytes.data(), hlo::TensorType(dtype, {n}), device_index); });
}

}  // namespace torch_tpu::eager
