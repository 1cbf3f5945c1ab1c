// Finds the PJRT plugin shared library to load.
#pragma once

#include <string>
#include <vector>

namespace torch_tpu::pjrt {

// Environment variable naming a plugin .so explicitly; it wins over search.
inline constexpr const char* kPluginEnvVar = "TORCH_TPU_PJRT_PLUGIN";

// True when this machine exposes a TPU (/dev/accel0 or /dev/vfio/0).
bool tpu_device_present();

// Returns the path of the plugin to load, in this order:
//  1. $TORCH_TPU_PJRT_PLUGIN, if set and non-empty (must exist, else Error);
//  2. <dir>/libtpu/libtpu.so for the first search dir that has it, only when
//     a TPU is present;
//  3. <dir>/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so for the first search dir
//     that has it.
// `search_dirs` are Python's sys.path entries (pip installs plugins there).
// Throws Error(NOT_FOUND) with install guidance when nothing is found.
std::string locate_plugin(const std::vector<std::string>& search_dirs);

}  // namespace torch_tpu::pjrt
