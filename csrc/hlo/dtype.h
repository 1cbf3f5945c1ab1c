// Element types of StableHLO tensors, and their MLIR spelling.
#pragma once
#include <cstdint>
#include <string>

namespace torch_tpu::hlo {

enum class DType : int8_t {
  Pred, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128,
  F8E5M2, F8E4M3FN,  // 8-bit floats: storage, casts and scaled matmuls
};

const char* dtype_name(DType t);  // MLIR element type: "f32", "ui8", "i1", ...
int dtype_bits(DType t);
// Bytes per element in memory (a Pred is stored in one byte).
inline int64_t dtype_bytes(DType t) { return t == DType::Pred ? 1 : dtype_bits(t) / 8; }
inline bool is_float8(DType t) { return t == DType::F8E5M2 || t == DType::F8E4M3FN; }
inline bool is_float(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64 || is_float8(t);
}
inline bool is_complex(DType t) { return t == DType::C64 || t == DType::C128; }
// The real component type of a complex type (F32 for C64); other types map to themselves.
inline DType complex_component(DType t) { return t == DType::C64 ? DType::F32 : t == DType::C128 ? DType::F64 : t; }
inline DType complex_of(DType t) { return t == DType::F64 ? DType::C128 : DType::C64; }
inline bool is_unsigned(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}
inline bool is_signed_int(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}
inline bool is_integral(DType t) { return is_unsigned(t) || is_signed_int(t); }

}  // namespace torch_tpu::hlo
