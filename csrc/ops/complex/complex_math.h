// Helpers the complex rules share (ops/complex/).
#pragma once
#include "ops/elementwise_common.h"

namespace torch_tpu::ops::complex_math {

// The sign bit of a real value (set for -0 too).
inline Value sign_bit(Builder& b, const Value& x) {
  DType bits = x.type.dtype == DType::F64 ? DType::I64 : DType::I32;
  Value i = b.bitcast_convert(x, x.type.with_dtype(bits));
  return b.compare(i, b.splat_int(i.type, 0), "LT");
}

// sqrt with C99's signs: Re >= 0 and Im carrying the sign of Im z, so that a
// -0 imaginary part takes the lower side of the cut (XLA's ignores it).
inline Value csqrt(Builder& b, const Value& z) {
  Value r = b.unary("sqrt", z);
  Value im = b.unary("abs", b.imag(r));
  return b.complex(b.unary("abs", b.real(r)), b.select(sign_bit(b, b.imag(z)), b.negate(im), im));
}

}  // namespace torch_tpu::ops::complex_math
