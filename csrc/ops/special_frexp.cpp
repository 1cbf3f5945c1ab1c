// frexp: x = mantissa * 2^exponent with |mantissa| in [0.5, 1), read from the
// f32 bit pattern (half types widen to f32 exactly and their mantissa rounds
// back exactly). Zero, inf and NaN come back unchanged with exponent 0, as C's
// frexp does on the CPU.
#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

TORCH_TPU_LOWERING("frexp.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& mant_t = c.outputs[0];
  const TensorType& exp_t = c.outputs[1];
  if (!hlo::is_float(mant_t.dtype)) throw std::invalid_argument("unsupported dtype " + mant_t.str());
  DType ct = compute_type(mant_t.dtype);
  if (ct != DType::F32) throw std::invalid_argument("frexp lowering handles f32 and half types, not " + mant_t.str());
  Value x = b.convert(operand(c, v, 0), ct);
  TensorType bits_t{DType::I32, x.type.dims};
  auto ki = [&](int64_t n) { return b.splat_int(bits_t, n); };
  Value bits = b.bitcast_convert(x, bits_t);
  Value field = b.binary("and", b.binary("shift_right_logical", bits, ki(23)), ki(0xff));
  Value frac = b.binary("and", bits, ki(0x7fffff));
  Value sign = b.binary("and", bits, ki(static_cast<int32_t>(0x80000000u)));
  Value e = b.subtract(field, ki(126));
  Value mbits = b.binary("or", b.binary("or", sign, frac), ki(126 << 23));
  // Subnormals from the bits (XLA's CPU flushes subnormal arithmetic to zero):
  // frac * 2^-149 with top bit p is (frac / 2^(p+1)) * 2^(p-148).
  Value sub = logical_and(b, b.compare(field, ki(0), "EQ"), b.compare(frac, ki(0), "NE"));
  Value p = b.subtract(ki(31), b.unary("count_leading_zeros", frac));
  Value norm = b.binary("and", b.binary("shift_left", frac, b.subtract(ki(23), p)), ki(0x7fffff));
  e = b.select(sub, b.subtract(p, ki(148)), e);
  mbits = b.select(sub, b.binary("or", b.binary("or", sign, norm), ki(126 << 23)), mbits);
  Value m = b.bitcast_convert(mbits, x.type);
  Value keep = logical_or(b, logical_and(b, b.compare(field, ki(0), "EQ"), b.compare(frac, ki(0), "EQ")),
                          b.compare(field, ki(0xff), "EQ"));  // zero, inf, NaN
  m = b.select(keep, x, m);
  e = b.select(keep, ki(0), e);
  return Values{b.convert(m, mant_t.dtype), b.convert(e, exp_t.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
