#include "eager/dtype_map.h"

#include <c10/util/Exception.h>

namespace torch_tpu::eager {

hlo::DType to_hlo(c10::ScalarType t, const char* op) {
  using S = c10::ScalarType;
  using D = hlo::DType;
  switch (t) {
    case S::Bool: return D::Pred;
    case S::Char: return D::I8;
    case S::Short: return D::I16;
    case S::Int: return D::I32;
    case S::Long: return D::I64;
    case S::Byte: return D::U8;
    case S::UInt16: return D::U16;
    case S::UInt32: return D::U32;
    case S::UInt64: return D::U64;
    case S::Half: return D::F16;
    case S::BFloat16: return D::BF16;
    case S::Float: return D::F32;
    case S::Double: return D::F64;
    case S::ComplexFloat: return D::C64;
    case S::ComplexDouble: return D::C128;
    case S::Float8_e5m2: return D::F8E5M2;
    case S::Float8_e4m3fn: return D::F8E4M3FN;
    default: break;
  }
  TORCH_CHECK_TYPE(false, op, ": dtype ", t, " is not supported on the tpu device");
}

c10::ScalarType to_scalar_type(hlo::DType t) {
  using S = c10::ScalarType;
  using D = hlo::DType;
  switch (t) {
    case D::Pred: return S::Bool;
    case D::I8: return S::Char;
    case D::I16: return S::Short;
    case D::I32: return S::Int;
    case D::I64: return S::Long;
    case D::U8: return S::Byte;
    case D::U16: return S::UInt16;
    case D::U32: return S::UInt32;
    case D::U64: return S::UInt64;
    case D::F16: return S::Half;
    case D::BF16: return S::BFloat16;
    case D::F32: return S::Float;
    case D::F64: return S::Double;
    case D::C64: return S::ComplexFloat;
    case D::C128: return S::ComplexDouble;
    case D::F8E5M2: return S::Float8_e5m2;
    case D::F8E4M3FN: return S::Float8_e4m3fn;
  }
  return S::Undefined;
}

}  // namespace torch_tpu::eager
