#include "device/device_error.h"

#include <c10/util/Exception.h>

#include "device/allocator.h"
#include "device/runtime.h"

namespace torch_tpu::device {

int64_t bytes_of(const std::vector<hlo::TensorType>& types) {
  int64_t n = 0;
  for (const auto& t : types) n += t.numel() * static_cast<int64_t>(pjrt::element_size(to_pjrt(t.dtype)));
  return n;
}

namespace {
std::string mib(int64_t bytes) { return std::to_string((bytes + (1 << 19)) >> 20) + " MiB"; }
}  // namespace

void raise_device_failure(const pjrt::Error& e, const std::string& action, int device_index, int64_t bytes_asked) {
  if (e.code() == pjrt::kResourceExhausted) {
    int64_t in_use = memory_stats(device_index).allocated;
    auto [free, total] = memory_info(device_index);
    TORCH_CHECK_WITH(OutOfMemoryError, false, "tpu out of memory ", action, ": tried to allocate ", mib(bytes_asked),
                     "; tpu:", device_index, " has ", mib(total), " in all, ", mib(free), " free, ", mib(in_use),
                     " held by live tensors. (", e.what(), ")");
  }
  TORCH_CHECK(false, "torch_tpu: ", action, " failed: ", e.what());
}

}  // namespace torch_tpu::device
