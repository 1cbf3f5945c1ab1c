// TORCH_TPU_CHECK_TPU_TYPES=1: a stand-in for a TPU's compiler on plugins
// that accept anything. A TPU has no float64 or complex128, so a program for
// work whose tensors hold neither must not contain them (a Python scalar
// passed as f64, an f64 accumulator); the check fails such a program with
// the op and the offending line before it is compiled.
#pragma once
#include <string>
#include <vector>

#include "hlo/tensor_type.h"

namespace torch_tpu::eager {

bool tpu_type_check_enabled();
void set_tpu_type_check(bool on);  // tests switch it within a process

// Throws (RuntimeError naming `op`) when `text` uses f64 or complex<f64>
// while none of `work` (the dtypes of the call's tensors and storages) is
// float64 or complex128.
void check_tpu_types(const std::string& op, const std::vector<hlo::DType>& work, const std::string& text);

}  // namespace torch_tpu::eager
