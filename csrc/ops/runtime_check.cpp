#include "ops/runtime_check.h"

namespace torch_tpu::ops {

namespace {
thread_local std::vector<RuntimeCheck> recorded;
}

void add_runtime_check(const hlo::Value& failed, CheckKind kind, std::string message) {
  recorded.push_back(RuntimeCheck{failed, kind, std::move(message)});
}

std::vector<RuntimeCheck> take_runtime_checks() {
  std::vector<RuntimeCheck> out;
  out.swap(recorded);
  return out;
}

}  // namespace torch_tpu::ops
