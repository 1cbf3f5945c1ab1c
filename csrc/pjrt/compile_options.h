// Compile settings and their encoding as a serialized xla.CompileOptionsProto,
// the `compile_options` bytes of PJRT_Client_Compile. Encoded by hand (a few
// protobuf fields) so this layer needs no protobuf dependency.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace torch_tpu::pjrt {

// XLA debug-option overrides by name, e.g. {"xla_cpu_enable_fast_math",
// "False"}: values are strings XLA parses by the option's type (booleans are
// spelled "True"/"False"). Unknown names fail compilation.
using OptionOverrides = std::vector<std::pair<std::string, std::string>>;

struct CompileSettings {
  int num_replicas = 1;
  int num_partitions = 1;
  // A portable executable is not bound to a device at compile time and can
  // run on any addressable device (chosen per execute call).
  bool portable = true;
  OptionOverrides env_option_overrides;
};

// `settings` with `defaults` added where it does not name the option itself.
CompileSettings with_default_overrides(CompileSettings settings, const OptionOverrides& defaults);

// Serialized CompileOptionsProto (xla/pjrt/proto/compile_options.proto):
//   executable_build_options (3) {
//     device_ordinal (1) = -1   // "unset": the runtime picks the device
//     num_replicas (4), num_partitions (5),
//     use_spmd_partitioning (6) = true when num_partitions > 1
//   }
//   compile_portable_executable (4)
//   env_option_overrides (7): map<string, OptionOverrideProto{string_field 1}>
std::string serialize_compile_options(const CompileSettings& settings);

}  // namespace torch_tpu::pjrt
