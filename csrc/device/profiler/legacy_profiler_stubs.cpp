// The profiler's device hooks for `tpu` (torch.autograd.profiler with
// use_device="tpu", and the PrivateUse1 activity): each op's start and end
// are device events (device/device_event.h), so device times are the spans
// between the completion of the work queued before each point. Without these
// hooks the profiler read uninitialized device times (negative totals).
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/stubs/base.h>

#include "device/device_event.h"
#include "device/runtime.h"

namespace torch_tpu::device {
namespace {

using torch::profiler::impl::ProfilerVoidEventStub;

struct TpuProfilerStubs final : torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, ProfilerVoidEventStub* event, int64_t* cpu_ns) const override {
    int index = current_device();
    if (device) *device = static_cast<c10::DeviceIndex>(index);
    auto* e = new DeviceEvent(/*timing=*/true);
    e->record(index);
    *event = ProfilerVoidEventStub(e, [](void* p) { delete static_cast<DeviceEvent*>(p); });
    if (cpu_ns) *cpu_ns = c10::getTime();
  }
  float elapsed(const ProfilerVoidEventStub* a, const ProfilerVoidEventStub* b) const override {
    auto* start = static_cast<DeviceEvent*>(a->get());
    auto* end = static_cast<DeviceEvent*>(b->get());
    return static_cast<float>(start->elapsed_ms(*end) * 1000.0);  // microseconds, as CUDA's stubs
  }
  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }
  void onEachDevice(std::function<void(int)> op) const override {
    int saved = current_device();
    for (int i = 0; i < device_count(); ++i) {
      set_current_device(i);
      op(i);
    }
    set_current_device(saved);
  }
  void synchronize() const override { device::synchronize(-1); }
};

const bool registered = [] {
  static TpuProfilerStubs stubs;
  torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  return true;
}();

}  // namespace
}  // namespace torch_tpu::device
