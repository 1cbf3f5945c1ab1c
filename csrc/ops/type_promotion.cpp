#include "ops/type_promotion.h"

#include <stdexcept>

namespace torch_tpu::ops {

using hlo::DType;

namespace {

int category(DType t) {
  if (t == DType::Pred) return 0;
  if (hlo::is_integral(t)) return 1;
  if (hlo::is_float(t)) return 2;
  return 3;
}

// Optional dtype: `none` until something contributes.
struct Slot {
  bool set = false;
  DType t = DType::Pred;
  void add(DType d) {
    t = set ? promote_types(t, d) : d;
    set = true;
  }
};

Slot combine(const Slot& higher, const Slot& lower) {
  if (!higher.set) return lower;
  if (!lower.set) return higher;
  if (hlo::is_complex(higher.t)) return higher;
  if (hlo::is_complex(lower.t)) {
    Slot r = lower;
    if (hlo::is_float(higher.t)) r.t = higher.t == DType::F64 ? DType::C128 : DType::C64;
    return r;
  }
  if (hlo::is_float(higher.t)) return higher;
  if (higher.t == DType::Pred || hlo::is_float(lower.t)) {
    Slot r;
    r.add(higher.t);
    r.add(lower.t);
    return r;
  }
  return higher;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) {
    DType hi = ca > cb ? a : b, lo = ca > cb ? b : a;
    if (hlo::is_complex(hi) && hlo::is_float(lo) && lo == DType::F64) return DType::C128;
    return hi;
  }
  if (ca == 2) {  // floats: f16 + bf16 -> f32, otherwise the wider
    if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16)) return DType::F32;
    return hlo::dtype_bits(a) >= hlo::dtype_bits(b) ? a : b;
  }
  if (ca == 3) return hlo::dtype_bits(a) >= hlo::dtype_bits(b) ? a : b;
  // integers
  bool ua = hlo::is_unsigned(a), ub = hlo::is_unsigned(b);
  int ba = hlo::dtype_bits(a), bb = hlo::dtype_bits(b);
  if (ua == ub) return ba >= bb ? a : b;
  DType s = ua ? b : a, u = ua ? a : b;
  int bs = hlo::dtype_bits(s), bu = hlo::dtype_bits(u);
  if (bs > bu) return s;
  if (u == DType::U8) {  // uint8 with a signed type of <= 8 bits: int16
    return DType::I16;
  }
  // PyTorch has no promotion between uint16/32/64 and signed types.
  throw std::invalid_argument(std::string("Promotion for uint16, uint32, uint64 types is not supported"));
}

DType result_type(const OpCall& call, const std::vector<size_t>& arg_indices) {
  Slot dims, zero, number;
  for (size_t ai : arg_indices) {
    const Arg& a = call.arg(ai);
    for (int op : a.operands) {
      if (op < 0) continue;
      DType t = call.operands.at(op).dtype;
      if (call.operand_is_number.at(op)) {
        // Python numbers contribute their category's default dtype.
        if (hlo::is_float(t)) t = call.default_float;
        else if (hlo::is_complex(t)) t = call.default_float == DType::F64 ? DType::C128 : DType::C64;
        else if (t != DType::Pred) t = DType::I64;
        number.add(t);
      } else if (call.operands.at(op).rank() == 0) {
        zero.add(t);
      } else {
        dims.add(t);
      }
    }
  }
  Slot r = combine(dims, combine(zero, number));
  if (!r.set) throw std::invalid_argument(call.op + ": result_type of no operands");
  return r.t;
}

DType compute_type(DType t) { return (t == DType::F16 || t == DType::BF16) ? DType::F32 : t; }

DType widest_internal_type(DType t) { return t == DType::F64 || t == DType::C128 ? DType::F64 : DType::F32; }

}  // namespace torch_tpu::ops
