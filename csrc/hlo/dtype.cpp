#include "hlo/dtype.h"

namespace torch_tpu::hlo {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Pred: return "i1";
    case DType::I8: return "i8";
    case DType::I16: return "i16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::U8: return "ui8";
    case DType::U16: return "ui16";
    case DType::U32: return "ui32";
    case DType::U64: return "ui64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::C64: return "complex<f32>";
    case DType::C128: return "complex<f64>";
    case DType::F8E5M2: return "f8E5M2";
    case DType::F8E4M3FN: return "f8E4M3FN";
  }
  return "?";
}

int dtype_bits(DType t) {
  switch (t) {
    case DType::Pred: return 1;
    case DType::I8: case DType::U8: case DType::F8E5M2: case DType::F8E4M3FN: return 8;
    case DType::I16: case DType::U16: case DType::F16: case DType::BF16: return 16;
    case DType::I32: case DType::U32: case DType::F32: return 32;
    case DType::I64: case DType::U64: case DType::F64: case DType::C64: return 64;
    case DType::C128: return 128;
  }
  return 0;
}

}  // namespace torch_tpu::hlo
