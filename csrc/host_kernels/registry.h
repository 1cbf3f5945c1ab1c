// Host kernels: functions the CPU plugin's programs call as typed XLA FFI
// custom calls, for work XLA's CPU code generator does poorly. Each has a
// custom-call target name; the device runtime registers them with the plugin
// when it starts (platform "cpu" only), and a lowering rule emits the custom
// call only for a registered target, falling back to plain StableHLO
// otherwise (other plugins, TORCH_TPU_HOST_KERNELS=0, the TPU stand-in).
#pragma once

#include <vector>

#include "host_kernels/xla_ffi_abi.h"

namespace torch_tpu::host_kernels {

// lhs [M, K] rows in consecutive groups times per-group [N, K] blocks (rhs
// [G, N, K]), float32 or bfloat16; group_sizes [G] s32 or s64; result
// [M, N] in lhs's dtype, rows outside every group zero. See ragged_dot_rows.cpp.
inline constexpr const char* kRaggedDotRows = "torch_tpu_ragged_dot_rows";

struct HostKernel {
  const char* target;
  ffi::Handler handler;
};

// Every host kernel this build has.
std::vector<HostKernel> all();

// Set once by the device runtime, before it lowers anything.
void mark_registered(const char* target);
bool registered(const char* target);

}  // namespace torch_tpu::host_kernels
