// Runtime scalars in the precision the work runs at, so programs for float32
// or bfloat16 work hold no f64 a TPU lacks (DESIGN.md "Portable programs";
// TORCH_TPU_CHECK_TPU_TYPES=1 proves it).
#pragma once
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

#include "eager/call_parser.h"

namespace torch_tpu::eager {

// Outside float64/complex128 work, narrows the call's f64 Python numbers to
// f32 and its complex ones to complex64 where that is what the CPU computes
// with: when a floating tensor (float32, bfloat16, float16: opmath float)
// sets the compute type, or when the value is exact in the narrow type
// anyway. (A 0-d float64 CPU tensor keeps its type.)
void narrow_scalars_for_tpu(ParsedCall& p);

// `value` as fill_ and friends store it into a `target` tensor: converted on
// the host the way the CPU converts it (overflow is the CPU's error), and
// carried in the narrowest runtime type that holds the result exactly.
RuntimeScalar scalar_for_target(const c10::Scalar& value, c10::ScalarType target);

}  // namespace torch_tpu::eager
