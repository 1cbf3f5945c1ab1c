// frexp: x = mantissa * 2^exponent with |mantissa| in [0.5, 1), read from the
// f32 or f64 bit pattern (half types widen to f32 exactly and their mantissa
// rounds back exactly). Zero, inf and NaN come back unchanged with exponent 0, as C's
// frexp does on the CPU.
#include <limits>

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
  // The IEEE layout of the compute type: f32 (half types widen exactly) or f64.
  bool f64 = ct == DType::F64;
  const int64_t mbits_n = f64 ? 52 : 23, emax = f64 ? 0x7ff : 0xff, bias = f64 ? 1022 : 126;
  const int64_t total = f64 ? 64 : 32, min_exp = f64 ? 1073 : 148;  // a subnormal's top bit p: 2^(p - min_exp)
  Value x = b.convert(operand(c, v, 0), ct);
  TensorType bits_t{f64 ? DType::I64 : DType::I32, x.type.dims};
  auto ki = [&](int64_t n) { return b.splat_int(bits_t, n); };
  Value bits = b.bitcast_convert(x, bits_t);
  Value field = b.binary("and", b.binary("shift_right_logical", bits, ki(mbits_n)), ki(emax));
  Value frac = b.binary("and", bits, ki((int64_t{1} << mbits_n) - 1));
  Value sign = b.binary("and", bits, ki(f64 ? std::numeric_limits<int64_t>::min() : static_cast<int32_t>(0x80000000u)));
  Value e = b.subtract(field, ki(bias));
  Value exp_bits = ki(bias << mbits_n);
  Value mbits = b.binary("or", b.binary("or", sign, frac), exp_bits);
  // Subnormals from the bits (XLA's CPU flushes subnormal arithmetic to zero):
  // frac * 2^-(min_exp+1) with top bit p is (frac / 2^(p+1)) * 2^(p - min_exp).
  Value sub = logical_and(b, b.compare(field, ki(0), "EQ"), b.compare(frac, ki(0), "NE"));
  Value p = b.subtract(ki(total - 1), b.unary("count_leading_zeros", frac));
  Value norm = b.binary("and", b.binary("shift_left", frac, b.subtract(ki(mbits_n), p)), ki((int64_t{1} << mbits_n) - 1));
  e = b.select(sub, b.subtract(p, ki(min_exp)), e);
  mbits = b.select(sub, b.binary("or", b.binary("or", sign, norm), exp_bits), mbits);
  Value m = b.bitcast_convert(mbits, x.type);
  Value keep = logical_or(b, logical_and(b, b.compare(field, ki(0), "EQ"), b.compare(frac, ki(0), "EQ")),
                          b.compare(field, ki(emax), "EQ"));  // zero, inf, NaN
  m = b.select(keep, x, m);
  e = b.select(keep, ki(0), e);
  return Values{b.convert(m, mant_t.dtype), b.convert(e, exp_t.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
