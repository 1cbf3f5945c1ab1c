// The float64 rule (DESIGN.md "Portable programs"): a TPU has no 64-bit
// floating point, so on a plugin whose platform is "tpu" a float64 or
// complex128 tpu tensor is refused with an error naming the op, and the
// 64-bit numbers that remain for integer work (0-d CPU float64 tensors, Python
// floats kept wide) travel as float32/complex64. Other platforms (the CPU and
// CUDA plugins) keep float64. A stand-in (TORCH_TPU_PLATFORM_STANDIN=tpu, or
// _C._set_tpu_platform_standin) applies the rule on any plugin, so it is
// tested here; the TPU type check then proves no f64 reaches a program.
#pragma once
#include <c10/core/ScalarType.h>

namespace torch_tpu::eager {

// True on a TPU platform (or the stand-in).
bool platform_lacks_float64();
void set_tpu_platform_standin(bool on);
bool tpu_platform_standin();

// Raises for a float64/complex128 tpu tensor under the rule: a TypeError
// where tensors are made (empty, transfers), a RuntimeError inside an op.
void check_float64_rule(c10::ScalarType dtype, const char* op, bool in_op = false);

}  // namespace torch_tpu::eager
