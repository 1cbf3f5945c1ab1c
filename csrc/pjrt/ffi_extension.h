// Registering an XLA FFI handler (a host function a program calls through a
// typed custom call) with a plugin, through its PJRT FFI extension.
#pragma once

#include <string>

namespace torch_tpu::pjrt {

class Api;

// Registers `handler` (an XLA_FFI_Handler*) as the custom-call target
// `target` for `platform` ("cpu"). Returns "" on success, else why not (the
// plugin has no FFI extension, or rejected the call): callers then lower
// without the handler. Registration is process-wide in the plugin.
std::string register_ffi_handler(const Api& api, const std::string& target, void* handler,
                                 const std::string& platform);

}  // namespace torch_tpu::pjrt
