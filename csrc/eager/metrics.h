// Counters behind torch_tpu.metrics(): compiles, cache hits, executions,
// transfers and CPU fallbacks, so cost and recompiles are visible.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace torch_tpu::eager {

struct Metrics {
  int64_t compiles = 0;
  int64_t cache_hits = 0;
  int64_t cache_evictions = 0;  // programs dropped by the bounded cache
  int64_t executions = 0;
  double compile_seconds = 0;
  int64_t host_to_device_bytes = 0;
  int64_t device_to_host_bytes = 0;
  std::map<std::string, int64_t> compiles_by_op;
  std::map<std::string, int64_t> fallbacks_by_op;
};

Metrics metrics_snapshot();
void reset_metrics();
void count_compile(const std::string& op, double seconds);
void count_cache_hit();
void count_evictions(int64_t n);
void count_execution();
void count_transfer(int64_t host_to_device, int64_t device_to_host);
void count_fallback(const std::string& op);

}  // namespace torch_tpu::eager
