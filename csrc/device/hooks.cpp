// PrivateUse1HooksInterface: makes `torch.accelerator`, generators and
// storage resizes work for `tpu`.
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/CPUAllocator.h>

#include "device/allocator.h"
#include "device/generator.h"
#include "device/pinned_host_allocator.h"
#include "device/runtime.h"
#include "device/storage_slot.h"

namespace torch_tpu::device {
namespace {

struct TpuHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override {
    return default_generator(device_index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device_index) const override {
    return new_generator(device_index);
  }
  at::Device getDeviceFromPtr(void* data) const override {
    StorageSlot* slot = slot_at(data);
    TORCH_CHECK(slot, "torch_tpu: ", data, " is not a tpu address");
    return at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(slot->device_index));
  }
  bool isPinnedPtr(const void* p) const override { return is_pinned_host_pointer(p); }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinned_host_allocator(); }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return runtime_initialized(); }
  c10::DeviceIndex deviceCount() const override { return static_cast<c10::DeviceIndex>(device_count()); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_current_device(d); }
  c10::DeviceIndex getCurrentDevice() const override { return static_cast<c10::DeviceIndex>(current_device()); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = getCurrentDevice();
    set_current_device(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    resize_storage_bytes(storage, newsize);
  }
};

struct RegisterHooks {
  RegisterHooks() {
    static TpuHooks hooks;
    at::RegisterPrivateUse1HooksInterface(&hooks);
    c10::SetAllocator(c10::DeviceType::PrivateUse1, tpu_allocator());
  }
} register_hooks;

}  // namespace
}  // namespace torch_tpu::device
