#include "pjrt/fault_injection.h"

#include <atomic>

namespace torch_tpu::pjrt {
namespace {
std::atomic<int> pending[4];
}  // namespace

void inject_faults(FaultSite site, int count) { pending[static_cast<int>(site)].store(count < 0 ? 0 : count); }

bool take_fault(FaultSite site) {
  std::atomic<int>& n = pending[static_cast<int>(site)];
  int left = n.load(std::memory_order_relaxed);
  while (left > 0)
    if (n.compare_exchange_weak(left, left - 1)) return true;
  return false;
}

}  // namespace torch_tpu::pjrt
