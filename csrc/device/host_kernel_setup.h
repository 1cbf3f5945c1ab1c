// Registers the host kernels (csrc/host_kernels) with the plugin when the
// runtime starts, so lowering rules may call them.
#pragma once

#include <string>

namespace torch_tpu::pjrt {
class Api;
}

namespace torch_tpu::device {

// On the CPU platform only, unless TORCH_TPU_HOST_KERNELS=0 or the TPU
// stand-in (TORCH_TPU_PLATFORM_STANDIN=tpu) is on: a program meant for a TPU
// must not call host functions. A kernel the plugin rejects is left out with
// a one-line warning; its ops then lower to plain StableHLO.
void register_host_kernels(const pjrt::Api& api, const std::string& platform);

// "on", "off (why)": what register_host_kernels did, for torch_tpu's diagnostics.
std::string host_kernels_state();

}  // namespace torch_tpu::device
