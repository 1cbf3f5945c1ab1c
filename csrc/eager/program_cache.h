// A bounded, least-recently-used cache of compiled programs. Every XLA CPU
// executable keeps a few memory mappings of JIT code alive; an unbounded cache
// over thousands of shapes runs into the kernel's per-process map limit
// (vm.max_map_count) and the process dies. Evicted entries are shared_ptrs, so
// a program still in use by a caller stays alive until that caller lets go.
// A count bound alone is not enough (one linear-algebra program can hold
// dozens of maps), so every cache also registers with map_pressure.h, which
// empties the older half of each when the process nears the map limit.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace torch_tpu::eager {

// TORCH_TPU_PROGRAM_CACHE_SIZE overrides the default (per cache).
inline size_t program_cache_capacity() {
  static const size_t capacity = [] {
    const char* v = std::getenv("TORCH_TPU_PROGRAM_CACHE_SIZE");
    long long n = v ? std::atoll(v) : 0;
    return n > 0 ? static_cast<size_t>(n) : size_t{4096};
  }();
  return capacity;
}

// Every program cache's "drop your older half" (see map_pressure.h).
void register_program_cache(std::function<int64_t()> evict_older_half);

template <typename V>
class ProgramCache {
 public:
  // Caches live for the whole process (they are created once and leaked),
  // so the registry may hold `this`.
  ProgramCache() {
    register_program_cache([this] { return evict_oldest((size() + 1) / 2); });
  }

  std::shared_ptr<V> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);  // now the most recent
    return it->second->second;
  }

  // Returns how many entries were evicted to make room.
  int64_t insert(const std::string& key, std::shared_ptr<V> value) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {  // another thread compiled it meanwhile
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return 0;
    }
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    int64_t evicted = 0;
    while (index_.size() > program_cache_capacity()) {
      index_.erase(order_.back().first);
      order_.pop_back();
      ++evicted;
    }
    return evicted;
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return index_.size();
  }

  // Drops the `n` least recently used entries; returns how many went.
  int64_t evict_oldest(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t evicted = 0;
    for (; n > 0 && !order_.empty(); --n, ++evicted) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return evicted;
  }

 private:
  std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<V>>> order_;
  std::unordered_map<std::string, typename std::list<std::pair<std::string, std::shared_ptr<V>>>::iterator> index_;
};

}  // namespace torch_tpu::eager
