#include "eager/map_pressure.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <vector>

#include "eager/metrics.h"
#include "eager/program_cache.h"

namespace torch_tpu::eager {

namespace {

std::mutex registry_mu;
std::vector<std::function<int64_t()>>& registry() {
  static auto* r = new std::vector<std::function<int64_t()>>();
  return *r;
}

// TORCH_TPU_MAP_LIMIT stands in for the kernel's limit (tests use a small one).
long map_limit() {
  if (const char* v = std::getenv("TORCH_TPU_MAP_LIMIT"); v && std::atol(v) > 0) return std::atol(v);
  static const long limit = [] {
    std::ifstream f("/proc/sys/vm/max_map_count");
    long v = 0;
    return (f >> v) && v > 0 ? v : 65530L;
  }();
  return limit;
}

long maps_in_use() {
  std::ifstream maps("/proc/self/maps");
  if (!maps) return -1;
  return std::count(std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>(), '\n');
}

}  // namespace

void register_program_cache(std::function<int64_t()> evict_older_half) {
  std::lock_guard<std::mutex> lock(registry_mu);
  registry().push_back(std::move(evict_older_half));
}

void relieve_map_pressure() {
  // Reading /proc/self/maps costs ~1 ms at 30k maps; between two checks at
  // most 8 programs (a few hundred maps at worst) come in.
  static std::atomic<uint64_t> calls{0};
  if (calls.fetch_add(1) % 8 != 0) return;
  if (maps_in_use() <= map_limit() / 2) return;
  std::vector<std::function<int64_t()>> caches;
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    caches = registry();
  }
  for (auto& evict_older_half : caches) count_evictions(evict_older_half());
}

}  // namespace torch_tpu::eager
