#include "eager/metrics.h"

#include <mutex>

namespace torch_tpu::eager {

namespace {
std::mutex mu;
Metrics& m() {
  static auto* metrics = new Metrics();
  return *metrics;
}
}  // namespace

Metrics metrics_snapshot() {
  std::lock_guard<std::mutex> lock(mu);
  return m();
}

void reset_metrics() {
  std::lock_guard<std::mutex> lock(mu);
  m() = Metrics();
}

void count_compile(const std::string& op, double seconds) {
  std::lock_guard<std::mutex> lock(mu);
  m().compiles += 1;
  m().compile_seconds += seconds;
  m().compiles_by_op[op] += 1;
}

void count_cache_hit() {
  std::lock_guard<std::mutex> lock(mu);
  m().cache_hits += 1;
}

void count_evictions(int64_t n) {
  if (n == 0) return;
  std::lock_guard<std::mutex> lock(mu);
  m().cache_evictions += n;
}

void count_execution() {
  std::lock_guard<std::mutex> lock(mu);
  m().executions += 1;
}

void count_transfer(int64_t host_to_device, int64_t device_to_host) {
  std::lock_guard<std::mutex> lock(mu);
  m().host_to_device_bytes += host_to_device;
  m().device_to_host_bytes += device_to_host;
}

void count_fallback(const std::string& op) {
  std::lock_guard<std::mutex> lock(mu);
  m().fallbacks_by_op[op] += 1;
}

}  // namespace torch_tpu::eager
