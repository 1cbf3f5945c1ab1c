#include "device/device_event.h"

#include <c10/util/Exception.h>

#include "device/runtime.h"

namespace torch_tpu::device {

void DeviceEvent::record(int device_index) {
  device_ = device_index;
  prior_ = queued_work(device_index);
  done_at_.reset();
  query();
}

bool DeviceEvent::query() {
  if (!recorded() || done_at_) return true;
  for (const auto& e : prior_)
    if (!e->is_ready()) return false;
  done_at_ = Clock::now();
  prior_.clear();  // errors, if any, surface at the next synchronize() of the device
  return true;
}

void DeviceEvent::synchronize() {
  if (!recorded() || done_at_) return;
  for (const auto& e : prior_) {
    try {
      e->await();
    } catch (const std::exception& ex) {
      TORCH_CHECK(false, "torch_tpu: asynchronous error on tpu:", device_, " before the event: ", ex.what());
    }
  }
  done_at_ = Clock::now();
  prior_.clear();
}

double DeviceEvent::elapsed_ms(DeviceEvent& end) {
  TORCH_CHECK(timing_ && end.timing_, "Both events must be created with argument 'enable_timing=True'.");
  TORCH_CHECK(recorded() && end.recorded(), "Both events must be recorded before calculating elapsed time.");
  synchronize();
  end.synchronize();
  return std::chrono::duration<double, std::milli>(*end.done_at_ - *done_at_).count();
}

}  // namespace torch_tpu::device
