// DDP's runtime statistics (forward, backward compute and communication
// times, logged by its Logger) ask a timer registered for the device type;
// without one DDP warns on every model. This one reads the host clock, like
// the CPU's: collectives finish before they return here, so communication
// times are exact; compute times are host dispatch times (tpu work is
// asynchronous), which is what the CPU timer gives for CPU work too.
#include <torch/csrc/distributed/c10d/reducer_timer.hpp>

namespace torch_tpu::distributed {
namespace {

class HostClockTimer : public c10d::Timer {
 public:
  explicit HostClockTimer(c10::Device /*device*/) {}

  std::optional<int64_t> measureDifference(Event start, Event end) override {
    const int64_t a = getTimeRef(start), b = getTimeRef(end);
    if (a == c10d::kUnsetTime || b == c10d::kUnsetTime) return std::nullopt;
    // A backward that has not started its communication yet: no figure.
    if (b < a) return std::nullopt;
    return b - a;
  }
};

}  // namespace
}  // namespace torch_tpu::distributed

namespace c10d {
C10_REGISTER_TYPED_CLASS(TimerRegistry, c10::kPrivateUse1, torch_tpu::distributed::HostClockTimer)
}  // namespace c10d
