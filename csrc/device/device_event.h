// torch.Event / torch.tpu.Event on `tpu`. PJRT orders a device's work by its
// data dependencies, with one stream per device, so an event is the set of
// work queued on its device when it was recorded: it is complete when all of
// that work is, and its time is when that was seen (the record time when the
// device was already idle). Timings between events recorded on an idle or
// synchronized device are therefore exact up to host wake-up latency.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "pjrt/event.h"

namespace torch_tpu::device {

class DeviceEvent {
 public:
  explicit DeviceEvent(bool timing) : timing_(timing) {}
  void record(int device_index);
  bool query();        // complete? (true before the first record, as CUDA)
  void synchronize();  // waits; raises the first error of the work it covers
  bool timing() const { return timing_; }
  bool recorded() const { return device_ >= 0; }
  int device() const { return device_; }
  // Milliseconds from this event to `end`; waits for both.
  double elapsed_ms(DeviceEvent& end);

 private:
  using Clock = std::chrono::steady_clock;
  bool timing_;
  int device_ = -1;
  std::vector<std::shared_ptr<pjrt::Event>> prior_;
  std::optional<Clock::time_point> done_at_;
};

}  // namespace torch_tpu::device
