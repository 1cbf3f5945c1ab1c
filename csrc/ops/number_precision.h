// The precision a Python number (an f64 or complex128 scalar) gets in a
// program: the precision the work runs at, so programs for float32/bfloat16
// work hold no f64 a TPU lacks (DESIGN.md "Portable programs"). One rule for
// eager calls (eager/portable_scalars.cpp) and compiled graph nodes
// (graph/graph_lowering.cpp), which know the result types at different times.
#pragma once
#include <vector>

#include "hlo/dtype.h"

namespace torch_tpu::ops {

inline bool is_wide(hlo::DType t) { return t == hlo::DType::F64 || t == hlo::DType::C128; }

// What a call's tensors and dtype arguments say about its numbers.
struct NumberContext {
  bool wide = false;            // float64/complex128 work: numbers keep f64
  bool float_tensor = false;    // a floating tensor sets the compute type
  bool integral_dtype = false;  // a dtype argument converts into an integer type

  void see_tensor(hlo::DType t) {
    wide |= is_wide(t);
    float_tensor |= hlo::is_float(t) || hlo::is_complex(t);
  }
  void see_dtype_arg(hlo::DType t) {
    wide |= is_wide(t);
    integral_dtype |= !hlo::is_float(t) && !hlo::is_complex(t);
  }
};

enum class NumberWidth {
  Keep,                  // f64: the CPU computes with the double
  Narrow,                // f32 (complex64)
  NarrowIfFloatResults,  // integers only: f32 if they promote to a float
                         // result or are compared (results_take_narrow)
};

// A float tensor sets a float compute type (a Python float never raises a
// float tensor's type), unless the call converts into an integral dtype; a
// number exact in f32 is the same number either way.
inline NumberWidth number_width(const NumberContext& c, bool exact_in_narrow) {
  if (c.wide) return NumberWidth::Keep;
  if (exact_in_narrow || (c.float_tensor && !c.integral_dtype)) return NumberWidth::Narrow;
  if (c.float_tensor || c.integral_dtype) return NumberWidth::Keep;
  return NumberWidth::NarrowIfFloatResults;
}

// With the result types known: integers promoted with a number compute in
// f32 when every result is float32-or-narrower, or every result is bool from
// non-bool inputs (the CPU compares in float).
inline bool results_take_narrow(const std::vector<hlo::DType>& results, bool pred_input) {
  if (results.empty()) return false;
  bool floats = true, compared = !pred_input;
  for (hlo::DType t : results) {
    floats &= (hlo::is_float(t) || hlo::is_complex(t)) && !is_wide(t);
    compared &= t == hlo::DType::Pred;
  }
  return floats || compared;
}

}  // namespace torch_tpu::ops
