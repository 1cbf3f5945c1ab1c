// Uniform values in [0, 1) from a generator argument's (seed, offset)
// operands, shared by the distribution rules that draw from them. (random.cpp
// keeps its own uniform01: it rounds to the result dtype's mantissa, which
// uniform_ on half types needs.)
#pragma once
#include <cmath>
#include <vector>

#include "ops/lowering_helpers.h"

namespace torch_tpu::ops {

// `dims` uniforms in f32 (f64 when `acc` is F64): the top mantissa bits of
// Philox words, scaled by 2^-digits.
inline Value philox_uniform(Builder& b, const OpCall& c, const Values& v, size_t gen_arg,
                            const std::vector<int64_t>& dims, DType acc) {
  bool wide = acc == DType::F64;
  DType word = wide ? DType::U64 : DType::U32;
  DType out = wide ? DType::F64 : DType::F32;
  int digits = wide ? 53 : 24;
  const Arg& g = c.arg(gen_arg);
  Value state = b.concatenate({b.reshape(v.at(g.operands.at(0)), {1}), b.reshape(v.at(g.operands.at(1)), {1})}, 0);
  Value bits = b.emit("rng_bit_generator", {state}, "rng_algorithm = #stablehlo<rng_algorithm PHILOX>",
                      {state.type, TensorType(word, dims)})[1];
  Value top = b.binary("shift_right_logical", bits, b.splat_int(TensorType(word, dims), (wide ? 64 : 32) - digits));
  return b.multiply(b.convert(top, out), b.splat_float(TensorType(out, dims), std::ldexp(1.0, -digits)));
}

}  // namespace torch_tpu::ops
