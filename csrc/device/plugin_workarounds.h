// Settings that keep a plugin's known defects away from our programs, applied
// before the plugin is loaded (it reads XLA_FLAGS once, on first use).
#pragma once
#include <string>

namespace torch_tpu::device {

// For the XLA CPU plugin: XLA_FLAGS gains --xla_cpu_use_xnnpack=false unless
// the user's XLA_FLAGS already sets that flag. Its XNNPACK dot reuses the
// right-hand operand it saw at a memory address for a later buffer at the
// same address: with buffers freed and reused under concurrent programs, a
// matmul came out as if computed with a freed tensor (tests/test_buffer_lifetime.py).
// A user's XLA_FLAGS that turns the dot on is kept, with a warning on stderr.
void apply_plugin_workarounds(const std::string& plugin_path);

}  // namespace torch_tpu::device
