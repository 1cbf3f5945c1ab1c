// PyTorch's name of a dtype ("Float", "Long", ...), for error messages that
// repeat the CPU's word for word.
#pragma once
#include "hlo/dtype.h"

namespace torch_tpu::ops {

inline const char* torch_dtype_name(hlo::DType t) {
  using hlo::DType;
  switch (t) {
    case DType::Pred: return "Bool";
    case DType::I8: return "Char";
    case DType::I16: return "Short";
    case DType::I32: return "Int";
    case DType::I64: return "Long";
    case DType::U8: return "Byte";
    case DType::U16: return "UInt16";
    case DType::U32: return "UInt32";
    case DType::U64: return "UInt64";
    case DType::F16: return "Half";
    case DType::BF16: return "BFloat16";
    case DType::F8E5M2: return "Float8_e5m2";
    case DType::F8E4M3FN: return "Float8_e4m3fn";
    case DType::F32: return "Float";
    case DType::F64: return "Double";
    case DType::C64: return "ComplexFloat";
    case DType::C128: return "ComplexDouble";
  }
  return "?";
}

// The C++ element type some CPU messages name ("float", "c10::Half"):
// the floating types those messages meet; PyTorch's name for the others.
inline const char* cpp_type_name(hlo::DType t) {
  using hlo::DType;
  switch (t) {
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::F16: return "c10::Half";
    case DType::BF16: return "c10::BFloat16";
    default: return torch_dtype_name(t);
  }
}

}  // namespace torch_tpu::ops
