// DeviceGuardImpl for `tpu`: the current device is per thread; each device
// has one stream (PJRT orders a device's work itself), and events are markers
// that synchronize the device.
#include <c10/core/impl/DeviceGuardImplInterface.h>

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
  // Events: recording marks a point; waiting on it synchronizes the device.
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex, const c10::EventFlag) const override {
    if (*event == nullptr) *event = reinterpret_cast<void*>(static_cast<intptr_t>(stream.device_index()) + 1);
  }
  void block(void* event, const c10::Stream&) const override {
    if (event) synchronize(static_cast<int>(reinterpret_cast<intptr_t>(event) - 1));
  }
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream& s) const override { synchronize(s.device_index()); }
  void synchronizeEvent(void* event) const override {
    if (event) synchronize(static_cast<int>(reinterpret_cast<intptr_t>(event) - 1));
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
    return cap;
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, TpuGuardImpl);

}  // namespace
}  // namespace torch_tpu::device
