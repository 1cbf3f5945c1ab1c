#include "device/device_event.h"

#include <c10/util/Exception.h>

#include "device/runtime.h"

namespace torch_tpu::device {

void DeviceEvent::record(int device_index) {
  device_ = device_index;
  prior_ = queued_work(device_index);
  state_ = std::make_shared<State>();
  if (prior_.empty()) return state_->mark_done();
  if (!timing_) return;
  state_->remaining = prior_.size();
  for (const auto& e : prior_) {
    e->on_ready([state = state_] {
      std::lock_guard<std::mutex> lock(state->mutex);
      if (--state->remaining == 0 && !state->done_at) {
        state->done_at = Clock::now();
        state->ready.notify_all();
      }
    });
  }
}

bool DeviceEvent::query() {
  if (!recorded()) return true;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->done_at) return true;
  }
  for (const auto& e : prior_)
    if (!e->is_ready()) return false;
  wait_for_callbacks();
  state_->mark_done();
  return true;
}

void DeviceEvent::wait_for_callbacks() {
  // The work is done; a timing event's callbacks, which hold the time it
  // finished, run on a plugin thread right after. Waiting for them keeps that
  // time (taking "now" instead would date the event to this call).
  if (!timing_) return;
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->ready.wait_for(lock, std::chrono::seconds(10), [&] { return state_->done_at.has_value(); });
}

void DeviceEvent::synchronize() {
  if (!recorded()) return;
  for (const auto& e : prior_) {
    try {
      e->await();
    } catch (const std::exception& ex) {
      TORCH_CHECK(false, "torch_tpu: asynchronous error on tpu:", device_, " before the event: ", ex.what());
    }
  }
  wait_for_callbacks();
  state_->mark_done();
  prior_.clear();
}

double DeviceEvent::elapsed_ms(DeviceEvent& end) {
  TORCH_CHECK(timing_ && end.timing_, "Both events must be created with argument 'enable_timing=True'.");
  TORCH_CHECK(recorded() && end.recorded(), "Both events must be recorded before calculating elapsed time.");
  synchronize();
  end.synchronize();
  if (end.state_ == state_) return 0.0;
  std::lock_guard<std::mutex> a(state_->mutex);
  std::lock_guard<std::mutex> b(end.state_->mutex);
  // Completion callbacks arrive on plugin threads with a few microseconds of
  // jitter; events of one device complete in record order, so a negative
  // difference is that jitter: 0.
  double ms = std::chrono::duration<double, std::milli>(*end.state_->done_at - *state_->done_at).count();
  return ms > 0 ? ms : 0.0;
}

}  // namespace torch_tpu::device
