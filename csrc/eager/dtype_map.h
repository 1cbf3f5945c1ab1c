// at::ScalarType <-> hlo::DType.
#pragma once
#include <c10/core/ScalarType.h>

#include "hlo/dtype.h"

namespace torch_tpu::eager {

// Throws a c10 error naming `op` for dtypes the device cannot hold.
hlo::DType to_hlo(c10::ScalarType t, const char* op = "tpu");
c10::ScalarType to_scalar_type(hlo::DType t);

}  // namespace torch_tpu::eager
