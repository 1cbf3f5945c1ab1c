// A PJRT client: one per process and plugin, owning the plugin's devices.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pjrt/compile_options.h"
#include "pjrt/device.h"

namespace torch_tpu::pjrt {

class Api;

namespace abi {
struct PJRT_Client;
}

struct ClientOptions {
  // CPU plugin only: number of virtual CPU devices (create option
  // "cpu_device_count", int64). Other plugins may reject the option.
  std::optional<int64_t> cpu_device_count;
  // Debug options every program compiled for this client carries (a plugin's
  // known defects kept away from our programs). Per compile rather than in
  // XLA_FLAGS: the plugin reads XLA_FLAGS once per process, possibly before
  // us (JAX loading the same plugin first), and other XLA users in the
  // process read it too.
  OptionOverrides compile_option_overrides;
};

// Always held by std::shared_ptr. Buffers and executables keep their Client
// alive, and the Client keeps its Api alive, so destruction order is safe.
class Client : public std::enable_shared_from_this<Client> {
 public:
  static std::shared_ptr<Client> create(std::shared_ptr<Api> api,
                                        const ClientOptions& options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const std::string& platform_name() const { return platform_name_; }
  const std::string& platform_version() const { return platform_version_; }
  int process_index() const { return process_index_; }
  // In the plugin's order; stable for the Client's lifetime.
  const std::vector<Device>& addressable_devices() const { return devices_; }

  // What a compile for this client sends: `requested` plus the client's
  // compile_option_overrides where `requested` does not set them.
  CompileSettings compile_settings(const CompileSettings& requested) const {
    return with_default_overrides(requested, compile_option_overrides_);
  }

  std::shared_ptr<Api> api() const { return api_; }
  abi::PJRT_Client* raw() const { return client_; }

 private:
  Client(std::shared_ptr<Api> api, abi::PJRT_Client* client);

  std::shared_ptr<Api> api_;
  abi::PJRT_Client* client_;
  std::string platform_name_;
  std::string platform_version_;
  int process_index_ = 0;
  std::vector<Device> devices_;
  OptionOverrides compile_option_overrides_;
};

}  // namespace torch_tpu::pjrt
