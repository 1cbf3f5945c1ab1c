// A device of a PJRT client.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace torch_tpu::pjrt {

namespace abi {
struct PJRT_Api;
struct PJRT_Device;
}  // namespace abi

struct MemoryStats {
  int64_t bytes_in_use = 0;
  std::optional<int64_t> peak_bytes_in_use;  // when the plugin reports it
  std::optional<int64_t> bytes_limit;        // when the plugin reports it
};

// Thin, copyable, non-owning handle. The PJRT_Device belongs to the Client
// and is valid for the Client's lifetime; each accessor asks the plugin.
class Device {
 public:
  Device() = default;
  Device(const abi::PJRT_Api* api, abi::PJRT_Device* device)
      : api_(api), device_(device) {}

  // Global device id (unique across processes).
  int id() const;
  // Backend-specific hardware number (e.g. the chip index); -1 if undefined.
  int local_hardware_id() const;
  // Vendor string identifying the device kind, e.g. "cpu" or "TPU v5 lite".
  std::string kind() const;
  // Verbose description, for error messages.
  std::string debug_string() const;
  // Terse description, e.g. "CpuDevice(id=0)".
  std::string to_string() const;
  // nullopt when the plugin lacks PJRT_Device_MemoryStats or answers
  // UNIMPLEMENTED; other failures throw Error.
  std::optional<MemoryStats> memory_stats() const;

  abi::PJRT_Device* raw() const { return device_; }
  const abi::PJRT_Api* api() const { return api_; }
  bool valid() const { return device_ != nullptr; }

  friend bool operator==(const Device& a, const Device& b) {
    return a.device_ == b.device_;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }

 private:
  const abi::PJRT_Api* api_ = nullptr;
  abi::PJRT_Device* device_ = nullptr;
};

}  // namespace torch_tpu::pjrt
