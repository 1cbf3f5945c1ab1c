// Completion of asynchronous plugin work (transfers, executions).
#pragma once

#include <functional>
#include <memory>

namespace torch_tpu::pjrt {

class Error;

namespace abi {
struct PJRT_Api;
struct PJRT_Event;
}  // namespace abi

// Owns a PJRT_Event (move-only). A default-constructed (empty) Event means
// "nothing pending": it is ready and await() returns at once.
// Destroying an Event never cancels the work. Events that guard writes into
// caller memory (device-to-host copies) are created with wait_on_destroy so
// that dropping them early cannot leave a copy landing in freed memory.
class Event {
 public:
  Event() = default;
  // Takes ownership of `event` (nullptr gives an empty Event). `keep_alive`
  // is held until the Event is destroyed, e.g. the buffer a transfer reads.
  Event(const abi::PJRT_Api* api, abi::PJRT_Event* event,
        std::shared_ptr<const void> keep_alive = nullptr,
        bool wait_on_destroy = false);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Blocks until the work is done; throws Error if it failed. May be called
  // repeatedly (a failed event throws each time).
  void await() const;
  // True once the work finished, successfully or not.
  bool is_ready() const;
  // Calls `fn` once the work finished (successfully or not): at once on this
  // thread if it already has, else later on a plugin thread. An empty Event is ready.
  void on_ready(std::function<void()> fn) const;
  bool empty() const { return event_ == nullptr && !failure_; }

  // An event that is complete and failed with `error` (fault_injection.h).
  static Event failed(std::shared_ptr<const class Error> error);

  abi::PJRT_Event* raw() const { return event_; }

 private:
  void reset() noexcept;

  const abi::PJRT_Api* api_ = nullptr;
  abi::PJRT_Event* event_ = nullptr;
  std::shared_ptr<const void> keep_alive_;
  bool wait_on_destroy_ = false;
  mutable bool finished_ = false;  // await() returned or threw
  std::shared_ptr<const Error> failure_;  // set only by failed()
};

}  // namespace torch_tpu::pjrt
