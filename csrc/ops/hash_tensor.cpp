// hash_tensor(self, dim=[], keepdim, mode=0): each element widened to its 64-bit
// float or integer equivalent, bitcast to uint64, xor-reduced over `dim`
// ([] = every dim), like the CPU. A float32 (or half) value's float64 bit
// pattern is built with integer arithmetic, not a float64 convert: a TPU has no
// float64, and the check mode (TORCH_TPU_CHECK_TPU_TYPES) forbids it here.
#include <set>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

// The float64 bits of a float32 value (NaN payloads and subnormals included).
Value f64_bits_of_f32(Builder& b, const Value& x) {
  TensorType u32(DType::U32, x.type.dims), u64(DType::U64, x.type.dims);
  auto k32 = [&](int64_t v) { return b.splat_int(u32, v); };
  auto k64 = [&](int64_t v) { return b.splat_int(u64, v); };
  Value u = b.bitcast_convert(x, u32);
  Value sign = b.binary("shift_left", b.convert(b.binary("shift_right_logical", u, k32(31)), DType::U64), k64(63));
  Value e = b.binary("and", b.binary("shift_right_logical", u, k32(23)), k32(0xff));
  Value m = b.binary("and", u, k32(0x7fffff));
  Value m64 = b.convert(m, DType::U64), e64 = b.convert(e, DType::U64);
  // normal: exponent rebiased by 1023 - 127; inf/NaN: all ones; zero: zero.
  Value normal = b.binary("or", b.binary("shift_left", b.add(e64, k64(896)), k64(52)),
                          b.binary("shift_left", m64, k64(29)));
  Value special = b.binary("or", k64(int64_t{0x7ff} << 52), b.binary("shift_left", m64, k64(29)));
  // subnormal m * 2^-149 with top bit p: exponent p + 874, mantissa m << (52 - p) without its top bit.
  Value p = b.convert(b.subtract(k32(31), b.unary("count_leading_zeros", m)), DType::U64);
  Value frac = b.binary("and", b.binary("shift_left", m64, b.subtract(k64(52), p)), k64((int64_t{1} << 52) - 1));
  Value sub = b.binary("or", b.binary("shift_left", b.add(p, k64(874)), k64(52)), frac);
  Value e_zero = b.compare(e, k32(0), "EQ");
  Value bits = b.select(b.compare(e, k32(0xff), "EQ"), special,
                        b.select(e_zero, b.select(b.compare(m, k32(0), "EQ"), k64(0), sub), normal));
  return b.binary("or", sign, bits);
}

Value u64_of(Builder& b, const OpCall& c, const Value& x) {
  DType t = x.type.dtype;
  if (t == DType::F64) return b.bitcast_convert(x, x.type.with_dtype(DType::U64));
  if (hlo::is_float(t)) return f64_bits_of_f32(b, b.convert(x, DType::F32));
  if (t == DType::Pred || hlo::is_unsigned(t)) return b.convert(x, DType::U64);
  if (hlo::is_complex(t)) throw NotImplemented(c.op + ": not implemented for complex tensors");
  return b.bitcast_convert(b.convert(x, DType::I64), x.type.with_dtype(DType::U64));  // sign-extended
}

TORCH_TPU_LOWERING("hash_tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (c.arg(3).i != 0) throw std::invalid_argument("hash_tensor: only mode=0 (xor reduction) is supported");
  const Value& x = operand(c, v, 0);
  int64_t rank = x.type.rank();
  std::set<int64_t> dims;
  for (int64_t d : c.arg(1).ints)
    if (rank > 0) dims.insert(d < 0 ? d + rank : d);  // a 0-d input takes dim 0 / -1 and reduces nothing
  if (c.arg(1).ints.empty())
    for (int64_t d = 0; d < rank; ++d) dims.insert(d);
  Value h = b.reduce({u64_of(b, c, x)}, {b.constant_int(DType::U64, 0)}, {dims.begin(), dims.end()},
                     [](Builder& r, const Values& a) { return Values{r.binary("xor", a[0], a[1])}; })[0];
  return Values{b.reshape(h, out.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
