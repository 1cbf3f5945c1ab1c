#include "eager/float64_rule.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "device/runtime.h"

namespace torch_tpu::eager {
namespace {

std::atomic<bool> standin{[] {
  const char* v = std::getenv("TORCH_TPU_PLATFORM_STANDIN");
  return v && std::string(v) == "tpu";
}()};

bool platform_is_tpu() {
  static const bool tpu = device::runtime().client->platform_name() == "tpu";
  return tpu;
}

}  // namespace

bool platform_lacks_float64() { return standin.load(std::memory_order_relaxed) || platform_is_tpu(); }
void set_tpu_platform_standin(bool on) { standin = on; }
bool tpu_platform_standin() { return standin.load(std::memory_order_relaxed); }

void check_float64_rule(c10::ScalarType dtype, const char* op, bool in_op) {
  if (dtype != c10::kDouble && dtype != c10::kComplexDouble) return;
  if (!platform_lacks_float64()) return;
  bool complex = dtype == c10::kComplexDouble;
  std::string msg = std::string(op) + ": " + (complex ? "complex128" : "float64") +
                    " tensors are not supported on TPU, which has no 64-bit floating point; use " +
                    (complex ? "complex64 (.to(torch.complex64))" : "float32 (.float())") +
                    " on the device, or keep the float64 work on the CPU";
  // A TypeError as MPS gives for tensor creation; inside an op a RuntimeError
  // (Python turns a TypeError in a binary operator into "unsupported operand").
  if (in_op) TORCH_CHECK(false, msg);
  TORCH_CHECK_TYPE(false, msg);
}

}  // namespace torch_tpu::eager
