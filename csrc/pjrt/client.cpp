#include "pjrt/client.h"

#include <utility>

#include "pjrt/api.h"
#include "pjrt/error.h"
#include "pjrt/pjrt_c_abi_sizes.h"

namespace torch_tpu::pjrt {

std::shared_ptr<Client> Client::create(std::shared_ptr<Api> api,
                                       const ClientOptions& options) {
  if (!api) throw Error(kInvalidArgument, "Client::create: null Api");
  const abi::PJRT_Api* c = api->raw();

  static const char kCpuDeviceCount[] = "cpu_device_count";
  std::vector<abi::PJRT_NamedValue> create_options;
  if (options.cpu_device_count) {
    auto value = abi::make<abi::PJRT_NamedValue>();
    value.name = kCpuDeviceCount;
    value.name_size = sizeof(kCpuDeviceCount) - 1;
    value.type = abi::PJRT_NamedValue_kInt64;
    value.int64_value = *options.cpu_device_count;
    value.value_size = 1;
    create_options.push_back(value);
  }

  auto args = abi::make<abi::PJRT_Client_Create_Args>();
  args.create_options = create_options.data();
  args.num_options = create_options.size();
  check(c, c->PJRT_Client_Create(&args), "PJRT_Client_Create");
  // The constructor takes ownership at once, so a failing query below still
  // destroys the client.
  auto client = std::shared_ptr<Client>(new Client(std::move(api), args.client));
  client->compile_option_overrides_ = options.compile_option_overrides;
  return client;
}

Client::Client(std::shared_ptr<Api> api, abi::PJRT_Client* client)
    : api_(std::move(api)), client_(client) {
  const abi::PJRT_Api* c = api_->raw();
  try {
    auto name = abi::make<abi::PJRT_Client_PlatformName_Args>();
    name.client = client_;
    check(c, c->PJRT_Client_PlatformName(&name), "PJRT_Client_PlatformName");
    platform_name_.assign(name.platform_name, name.platform_name_size);

    auto version = abi::make<abi::PJRT_Client_PlatformVersion_Args>();
    version.client = client_;
    check(c, c->PJRT_Client_PlatformVersion(&version),
          "PJRT_Client_PlatformVersion");
    platform_version_.assign(version.platform_version,
                             version.platform_version_size);

    auto index = abi::make<abi::PJRT_Client_ProcessIndex_Args>();
    index.client = client_;
    check(c, c->PJRT_Client_ProcessIndex(&index), "PJRT_Client_ProcessIndex");
    process_index_ = index.process_index;

    auto devices = abi::make<abi::PJRT_Client_AddressableDevices_Args>();
    devices.client = client_;
    check(c, c->PJRT_Client_AddressableDevices(&devices),
          "PJRT_Client_AddressableDevices");
    for (size_t i = 0; i < devices.num_addressable_devices; ++i) {
      devices_.emplace_back(c, devices.addressable_devices[i]);
    }
  } catch (...) {
    auto destroy = abi::make<abi::PJRT_Client_Destroy_Args>();
    destroy.client = client_;
    check_noexcept(c, c->PJRT_Client_Destroy(&destroy), "PJRT_Client_Destroy");
    throw;
  }
}

Client::~Client() {
  const abi::PJRT_Api* c = api_->raw();
  auto args = abi::make<abi::PJRT_Client_Destroy_Args>();
  args.client = client_;
  check_noexcept(c, c->PJRT_Client_Destroy(&args), "PJRT_Client_Destroy");
}

}  // namespace torch_tpu::pjrt
