// Settings that keep a plugin's known defects away from our programs.
#pragma once
#include <string>

#include "pjrt/compile_options.h"

namespace torch_tpu::device {

// The debug options every program compiled for the plugin at `plugin_path`
// carries (pjrt::ClientOptions::compile_option_overrides). For the XLA CPU
// plugin: xla_cpu_use_xnnpack=false, unless the user's XLA_FLAGS sets that
// flag. Its XNNPACK dot reuses the right-hand operand it saw at a memory
// address for a later buffer at the same address: with buffers freed and
// reused under concurrent programs, a matmul came out as if computed with a
// freed tensor (tests/test_buffer_lifetime.py). A user's XLA_FLAGS that turns
// the dot on is kept, with a warning on stderr.
pjrt::OptionOverrides plugin_compile_overrides(const std::string& plugin_path);

}  // namespace torch_tpu::device
