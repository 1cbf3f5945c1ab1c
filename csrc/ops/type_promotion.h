// PyTorch's type promotion (torch.result_type), torch-free: dimensioned
// tensors outrank 0-d tensors, which outrank Python numbers; a lower rank
// only matters when it brings a higher category (bool < int < float).
#pragma once
#include <vector>

#include "hlo/dtype.h"
#include "ops/op_call.h"

namespace torch_tpu::ops {

hlo::DType promote_types(hlo::DType a, hlo::DType b);

// result_type over the operands of the given schema arguments (tensors,
// tensor lists and scalars; None arguments are skipped).
hlo::DType result_type(const OpCall& call, const std::vector<size_t>& arg_indices);

// The dtype arithmetic runs in for an op whose result dtype is `t`: PyTorch's
// CPU kernels compute float16/bfloat16 elementwise math in float32.
hlo::DType compute_type(hlo::DType t);

// The widest float a rule may use internally for work in dtype `t` (where
// the CPU accumulates in double): f64 only for float64/complex128 work, f32
// otherwise, so programs for float32-or-narrower work hold no f64 a TPU lacks
// (DESIGN.md "Portable programs"; TORCH_TPU_CHECK_TPU_TYPES=1 checks it).
hlo::DType widest_internal_type(hlo::DType t);

}  // namespace torch_tpu::ops
