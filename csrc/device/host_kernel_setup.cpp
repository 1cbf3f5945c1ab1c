#include "device/host_kernel_setup.h"

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "host_kernels/registry.h"
#include "pjrt/ffi_extension.h"

namespace torch_tpu::device {
namespace {
std::string state = "off (the runtime has not started)";

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}
}  // namespace

void register_host_kernels(const pjrt::Api& api, const std::string& platform) {
  if (env_is("TORCH_TPU_HOST_KERNELS", "0")) {
    state = "off (TORCH_TPU_HOST_KERNELS=0)";
    return;
  }
  if (platform != "cpu") {
    state = "off (platform " + platform + ")";
    return;
  }
  if (env_is("TORCH_TPU_PLATFORM_STANDIN", "tpu")) {
    state = "off (TORCH_TPU_PLATFORM_STANDIN=tpu)";
    return;
  }
  state = "on";
  for (const host_kernels::HostKernel& k : host_kernels::all()) {
    std::string why = pjrt::register_ffi_handler(api, k.target, reinterpret_cast<void*>(k.handler), "cpu");
    if (why.empty()) {
      host_kernels::mark_registered(k.target);
    } else {
      std::cerr << "torch_tpu: warning: host kernel " << k.target << " not registered (" << why
                << "); its ops use plain StableHLO\n";
      state = "partly off (" + std::string(k.target) + ": " + why + ")";
    }
  }
}

std::string host_kernels_state() { return state; }

}  // namespace torch_tpu::device
