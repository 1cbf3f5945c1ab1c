// The visible CPU fallback (DESIGN.md §3): an op with no tpu lowering runs on
// the CPU (inputs copied over, results copied back), with a one-time warning
// per op and a count in torch_tpu.metrics(). TORCH_TPU_FALLBACK=error makes
// it an error instead, which model tests use to prove nothing fell back.
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "eager/boxed_kernel.h"
#include "eager/metrics.h"
#include "eager/op_variants.h"

namespace torch_tpu::eager {
namespace {

bool fallback_is_error() {
  const char* v = std::getenv("TORCH_TPU_FALLBACK");
  return v && std::strcmp(v, "error") == 0;
}

}  // namespace

void run_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  std::string name = op_name(op.schema());
  // op_name drops the aten namespace (the metrics key); messages name it in full.
  std::string full = name.find("::") == std::string::npos ? "aten::" + name : name;
  TORCH_CHECK_NOT_IMPLEMENTED(!fallback_is_error(), "torch_tpu: ", full,
                              " has no tpu lowering, and TORCH_TPU_FALLBACK=error forbids running it on the CPU");
  {
    static std::mutex mu;
    static std::set<std::string> warned;
    std::lock_guard<std::mutex> lock(mu);
    if (warned.insert(name).second)
      TORCH_WARN("torch_tpu: ", full,
                 " has no tpu lowering and runs on the CPU (copies in and out); "
                 "see torch_tpu.metrics()['fallbacks_by_op']. Set TORCH_TPU_FALLBACK=error to make this an error.");
  }
  count_fallback(name);
  at::native::cpu_fallback(op, stack, /*error_on_views=*/true);
}

namespace {

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&run_cpu_fallback>());
}

}  // namespace
}  // namespace torch_tpu::eager
