#include "device/plugin_workarounds.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace torch_tpu::device {

namespace {

bool is_xla_cpu_plugin(const std::string& path) {
  const std::string name = "xla_cpu_pjrt.so";
  return path.size() >= name.size() && path.compare(path.size() - name.size(), name.size(), name) == 0;
}

}  // namespace

pjrt::OptionOverrides plugin_compile_overrides(const std::string& plugin_path) {
  if (!is_xla_cpu_plugin(plugin_path)) return {};
  const char* current = std::getenv("XLA_FLAGS");
  const std::string flags = current ? current : "";
  if (flags.find("xla_cpu_use_xnnpack") != std::string::npos) {  // the user's choice stands, with a warning
    if (flags.find("xla_cpu_use_xnnpack=false") == std::string::npos)
      std::fprintf(stderr,
                   "torch_tpu: warning: XLA_FLAGS leaves the XLA CPU plugin's XNNPACK dot on; it was seen to "
                   "compute a matmul with a freed tensor's values (docs/reliability.md)\n");
    return {};
  }
  return {{"xla_cpu_use_xnnpack", "False"}};  // XLA parses booleans spelled "True"/"False"
}

}  // namespace torch_tpu::device
