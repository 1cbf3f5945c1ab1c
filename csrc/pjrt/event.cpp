#include "pjrt/event.h"

#include <utility>

#include "pjrt/error.h"
#include "pjrt/pjrt_c_abi_sizes.h"

namespace torch_tpu::pjrt {

Event::Event(const abi::PJRT_Api* api, abi::PJRT_Event* event,
             std::shared_ptr<const void> keep_alive, bool wait_on_destroy)
    : api_(api),
      event_(event),
      keep_alive_(std::move(keep_alive)),
      wait_on_destroy_(wait_on_destroy) {}

Event::~Event() { reset(); }

Event::Event(Event&& other) noexcept
    : api_(other.api_),
      event_(std::exchange(other.event_, nullptr)),
      keep_alive_(std::move(other.keep_alive_)),
      wait_on_destroy_(other.wait_on_destroy_),
      finished_(other.finished_),
      failure_(std::move(other.failure_)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    reset();
    api_ = other.api_;
    event_ = std::exchange(other.event_, nullptr);
    keep_alive_ = std::move(other.keep_alive_);
    wait_on_destroy_ = other.wait_on_destroy_;
    finished_ = other.finished_;
    failure_ = std::move(other.failure_);
  }
  return *this;
}

void Event::reset() noexcept {
  if (event_ != nullptr) {
    if (wait_on_destroy_ && !finished_) {
      auto wait = abi::make<abi::PJRT_Event_Await_Args>();
      wait.event = event_;
      check_noexcept(api_, api_->PJRT_Event_Await(&wait), "PJRT_Event_Await");
    }
    auto args = abi::make<abi::PJRT_Event_Destroy_Args>();
    args.event = event_;
    check_noexcept(api_, api_->PJRT_Event_Destroy(&args), "PJRT_Event_Destroy");
    event_ = nullptr;
  }
  keep_alive_.reset();
}

Event Event::failed(std::shared_ptr<const Error> error) {
  Event e;
  e.failure_ = std::move(error);
  return e;
}

void Event::await() const {
  if (failure_) throw *failure_;
  if (event_ == nullptr) return;
  auto args = abi::make<abi::PJRT_Event_Await_Args>();
  args.event = event_;
  abi::PJRT_Error* error = api_->PJRT_Event_Await(&args);
  finished_ = true;  // the outcome has been reported to the caller
  check(api_, error, "PJRT_Event_Await");
}

namespace {
// What a PJRT_Event_OnReady callback needs: the api to destroy the error it
// is handed, and the caller's function.
struct ReadyCall {
  const abi::PJRT_Api* api;
  std::function<void()> fn;
};

void ready_trampoline(abi::PJRT_Error* error, void* user_arg) {
  std::unique_ptr<ReadyCall> call(static_cast<ReadyCall*>(user_arg));
  if (error) {
    auto destroy = abi::make<abi::PJRT_Error_Destroy_Args>();
    destroy.error = error;
    call->api->PJRT_Error_Destroy(&destroy);
  }
  call->fn();
}
}  // namespace

void Event::on_ready(std::function<void()> fn) const {
  if (event_ == nullptr) return fn();
  auto call = std::make_unique<ReadyCall>(ReadyCall{api_, std::move(fn)});
  auto args = abi::make<abi::PJRT_Event_OnReady_Args>();
  args.event = event_;
  args.callback = &ready_trampoline;
  args.user_arg = call.get();
  abi::PJRT_Error* error = api_->PJRT_Event_OnReady(&args);
  if (!error) (void)call.release();  // the trampoline owns it now
  check(api_, error, "PJRT_Event_OnReady");
}

bool Event::is_ready() const {
  if (event_ == nullptr) return true;
  auto args = abi::make<abi::PJRT_Event_IsReady_Args>();
  args.event = event_;
  check(api_, api_->PJRT_Event_IsReady(&args), "PJRT_Event_IsReady");
  return args.is_ready;
}

}  // namespace torch_tpu::pjrt
