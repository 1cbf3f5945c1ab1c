#include "pjrt/device.h"

#include "pjrt/error.h"
#include "pjrt/pjrt_c_abi_sizes.h"

namespace torch_tpu::pjrt {
namespace {

void require_valid(const Device& device) {
  if (!device.valid()) {
    throw Error(kFailedPrecondition, "use of an empty Device handle");
  }
}

abi::PJRT_DeviceDescription* description(const abi::PJRT_Api* api,
                                         abi::PJRT_Device* device) {
  auto args = abi::make<abi::PJRT_Device_GetDescription_Args>();
  args.device = device;
  check(api, api->PJRT_Device_GetDescription(&args),
        "PJRT_Device_GetDescription");
  return args.device_description;
}

// Kind, DebugString and ToString differ only in the function and field.
template <typename Args, typename Fn, typename Ptr, typename Size>
std::string description_string(const abi::PJRT_Api* api,
                               abi::PJRT_Device* device, Fn fn, Ptr ptr,
                               Size size, const char* context) {
  auto args = abi::make<Args>();
  args.device_description = description(api, device);
  check(api, fn(&args), context);
  return std::string(args.*ptr ? args.*ptr : "", args.*ptr ? args.*size : 0);
}

}  // namespace

int Device::id() const {
  require_valid(*this);
  auto args = abi::make<abi::PJRT_DeviceDescription_Id_Args>();
  args.device_description = description(api_, device_);
  check(api_, api_->PJRT_DeviceDescription_Id(&args),
        "PJRT_DeviceDescription_Id");
  return args.id;
}

int Device::local_hardware_id() const {
  require_valid(*this);
  auto args = abi::make<abi::PJRT_Device_LocalHardwareId_Args>();
  args.device = device_;
  check(api_, api_->PJRT_Device_LocalHardwareId(&args),
        "PJRT_Device_LocalHardwareId");
  return args.local_hardware_id;
}

std::string Device::kind() const {
  require_valid(*this);
  using Args = abi::PJRT_DeviceDescription_Kind_Args;
  return description_string<Args>(api_, device_,
                                   api_->PJRT_DeviceDescription_Kind,
                                   &Args::device_kind, &Args::device_kind_size,
                                   "PJRT_DeviceDescription_Kind");
}

std::string Device::debug_string() const {
  require_valid(*this);
  using Args = abi::PJRT_DeviceDescription_DebugString_Args;
  return description_string<Args>(
      api_, device_, api_->PJRT_DeviceDescription_DebugString,
      &Args::debug_string, &Args::debug_string_size,
      "PJRT_DeviceDescription_DebugString");
}

std::string Device::to_string() const {
  require_valid(*this);
  using Args = abi::PJRT_DeviceDescription_ToString_Args;
  return description_string<Args>(api_, device_,
                                  api_->PJRT_DeviceDescription_ToString,
                                  &Args::to_string, &Args::to_string_size,
                                  "PJRT_DeviceDescription_ToString");
}

std::optional<MemoryStats> Device::memory_stats() const {
  require_valid(*this);
  if (api_->PJRT_Device_MemoryStats == nullptr) return std::nullopt;
  auto args = abi::make<abi::PJRT_Device_MemoryStats_Args>();
  args.device = device_;
  try {
    check(api_, api_->PJRT_Device_MemoryStats(&args),
          "PJRT_Device_MemoryStats");
  } catch (const Error& e) {
    if (e.code() == kUnimplemented) return std::nullopt;
    throw;
  }
  MemoryStats stats;
  stats.bytes_in_use = args.bytes_in_use;
  if (args.peak_bytes_in_use_is_set) {
    stats.peak_bytes_in_use = args.peak_bytes_in_use;
  }
  if (args.bytes_limit_is_set) stats.bytes_limit = args.bytes_limit;
  return stats;
}

}  // namespace torch_tpu::pjrt
