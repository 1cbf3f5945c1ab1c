// torch.Event / torch.tpu.Event on `tpu`. PJRT orders a device's work by its
// data dependencies, with one stream per device, so an event is the set of
// work queued on its device when it was recorded: it is complete when all of
// that work is. A timing event's time is when the last of that work finished
// (PJRT_Event_OnReady), or the record time when the device was idle: precise
// to the callbacks' delivery jitter (microseconds), not to device clocks.
#pragma once
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
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
  void wait_for_callbacks();
  using Clock = std::chrono::steady_clock;
  // Shared with the completion callbacks, which may outlive the event.
  struct State {
    std::mutex mutex;
    std::condition_variable ready;
    size_t remaining = 0;
    std::optional<Clock::time_point> done_at;
    void mark_done() {
      std::lock_guard<std::mutex> lock(mutex);
      if (!done_at) done_at = Clock::now();
    }
  };
  bool timing_;
  int device_ = -1;
  std::vector<std::shared_ptr<pjrt::Event>> prior_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace torch_tpu::device
