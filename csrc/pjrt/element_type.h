// Element types of device buffers. The numeric values are the PJRT C API's
// PJRT_Buffer_Type values, so an ElementType crosses the ABI unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torch_tpu::pjrt {

enum class ElementType : int32_t {
  Invalid = 0,
  Pred = 1,  // one byte per element, 0 or 1
  S8 = 2,
  S16 = 3,
  S32 = 4,
  S64 = 5,
  U8 = 6,
  U16 = 7,
  U32 = 8,
  U64 = 9,
  F16 = 10,
  F32 = 11,
  F64 = 12,
  BF16 = 13,
  C64 = 14,   // complex<float>
  C128 = 15,  // complex<double>
  F8E5M2 = 16,
  F8E4M3FN = 17,
  F8E4M3B11FNUZ = 18,
  F8E5M2FNUZ = 19,
  F8E4M3FNUZ = 20,
  // 21..25 are S4, U4, TOKEN, S2, U2: sub-byte or non-array types that this
  // layer does not move between host and device.
  F8E4M3 = 26,     // plugins older than API 0.55 reject it
  F8E3M4 = 27,     // plugins older than API 0.55 reject it
  F8E8M0FNU = 28,  // plugins older than API 0.63 reject it
};

// Bytes per element in the dense host representation; 0 for Invalid and for
// values this enum does not name.
size_t element_size(ElementType type);

// Lower-case XLA spelling ("f32", "bf16", "pred", ...); "invalid" for
// unknown values.
const char* element_type_name(ElementType type);

}  // namespace torch_tpu::pjrt
