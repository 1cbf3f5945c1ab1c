#include "pjrt/element_type.h"

namespace torch_tpu::pjrt {

size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::Pred:
    case ElementType::S8:
    case ElementType::U8:
    case ElementType::F8E5M2:
    case ElementType::F8E4M3FN:
    case ElementType::F8E4M3B11FNUZ:
    case ElementType::F8E5M2FNUZ:
    case ElementType::F8E4M3FNUZ:
    case ElementType::F8E4M3:
    case ElementType::F8E3M4:
    case ElementType::F8E8M0FNU:
      return 1;
    case ElementType::S16:
    case ElementType::U16:
    case ElementType::F16:
    case ElementType::BF16:
      return 2;
    case ElementType::S32:
    case ElementType::U32:
    case ElementType::F32:
      return 4;
    case ElementType::S64:
    case ElementType::U64:
    case ElementType::F64:
    case ElementType::C64:
      return 8;
    case ElementType::C128:
      return 16;
    case ElementType::Invalid:
      return 0;
  }
  return 0;
}

const char* element_type_name(ElementType type) {
  switch (type) {
    case ElementType::Pred: return "pred";
    case ElementType::S8: return "s8";
    case ElementType::S16: return "s16";
    case ElementType::S32: return "s32";
    case ElementType::S64: return "s64";
    case ElementType::U8: return "u8";
    case ElementType::U16: return "u16";
    case ElementType::U32: return "u32";
    case ElementType::U64: return "u64";
    case ElementType::F16: return "f16";
    case ElementType::F32: return "f32";
    case ElementType::F64: return "f64";
    case ElementType::BF16: return "bf16";
    case ElementType::C64: return "c64";
    case ElementType::C128: return "c128";
    case ElementType::F8E5M2: return "f8e5m2";
    case ElementType::F8E4M3FN: return "f8e4m3fn";
    case ElementType::F8E4M3B11FNUZ: return "f8e4m3b11fnuz";
    case ElementType::F8E5M2FNUZ: return "f8e5m2fnuz";
    case ElementType::F8E4M3FNUZ: return "f8e4m3fnuz";
    case ElementType::F8E4M3: return "f8e4m3";
    case ElementType::F8E3M4: return "f8e3m4";
    case ElementType::F8E8M0FNU: return "f8e8m0fnu";
    case ElementType::Invalid: break;
  }
  return "invalid";
}

}  // namespace torch_tpu::pjrt
