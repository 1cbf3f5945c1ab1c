// DeviceGuardImpl for `tpu`: the current device is per thread; each device
// has one stream (PJRT orders a device's work itself), and events are markers
// that cover the work queued before them (device/device_event.h).
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "device/device_event.h"
#include "device/runtime.h"

namespace torch_tpu::device {
namespace {

struct TpuGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::DeviceType::PrivateUse1; }

  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    if (d.index() != old.index()) setDevice(d);
    return old;
  }
  c10::Device getDevice() const override {
    return c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(current_device()));
  }
  void setDevice(c10::Device d) const override {
    if (d.index() >= 0) set_current_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    try {
      setDevice(d);
    } catch (...) {
    }
  }
  c10::Stream getStream(c10::Device d) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream getDefaultStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getNewStream(c10::Device d, int) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override {
    return static_cast<c10::DeviceIndex>(device_count());
  }
  // Events (device/device_event.h). A stream waiting on an event of its own
  // device needs nothing (PJRT orders the device's work by its data); on
  // another device's stream, the host waits for the event.
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex, const c10::EventFlag flag) const override {
    if (*event == nullptr) *event = new DeviceEvent(flag == c10::EventFlag::BACKEND_DEFAULT);
    static_cast<DeviceEvent*>(*event)->record(stream.device_index());
  }
  void block(void* event, const c10::Stream& stream) const override {
    auto* e = static_cast<DeviceEvent*>(event);
    if (e && e->recorded() && e->device() != stream.device_index()) e->synchronize();
  }
  bool queryEvent(void* event) const override { return !event || static_cast<DeviceEvent*>(event)->query(); }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    delete static_cast<DeviceEvent*>(event);
  }
  bool queryStream(const c10::Stream& s) const override {
    for (const auto& e : queued_work(s.device_index()))
      if (!e->is_ready()) return false;
    return true;
  }
  void synchronizeStream(const c10::Stream& s) const override { synchronize(s.device_index()); }
  void synchronizeEvent(void* event) const override {
    if (event) static_cast<DeviceEvent*>(event)->synchronize();
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start && end, "Both events must be recorded before calculating elapsed time.");
    return static_cast<DeviceEvent*>(start)->elapsed_ms(*static_cast<DeviceEvent*>(end));
  }
  void synchronizeDevice(const c10::DeviceIndex index) const override { synchronize(index); }
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const override {}

  // The dtypes tpu tensors can hold (eager/dtype_map.cpp); torch.accelerator.get_device_capability.
  c10::DeviceCapability getDeviceCapability(c10::Device) const override {
    c10::DeviceCapability cap;
    cap.capability_data.capability_bits = 0;
    auto& t = cap.capability_data.supported_scalar_types;
    t.has_Bool = t.has_Byte = t.has_Char = t.has_Short = t.has_Int = t.has_Long = 1;
    t.has_Half = t.has_BFloat16 = t.has_Float = t.has_Double = 1;
    t.has_ComplexFloat = t.has_ComplexDouble = 1;
    t.has_Float8_e5m2 = t.has_Float8_e4m3fn = 1;  // storage, casts, selection, _scaled_mm (eager/float8_ops.h)
    return cap;
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, TpuGuardImpl);

}  // namespace
}  // namespace torch_tpu::device
