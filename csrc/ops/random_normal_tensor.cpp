// normal with tensor mean and/or std: normal.Tensor_float(mean, std=1),
// normal.float_Tensor(mean, std), normal.Tensor_Tensor(mean, std); the result
// is mean + std * z, z standard normal by Box-Muller on Philox bits (like
// normal_ in random.cpp). The stream differs from the CPU's: tests check
// statistics. A negative std raises, as on the CPU.
#include <cmath>
#include <stdexcept>

#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

// `dims` uniforms in [0, 1) in f32 (f64 for f64 results) from the generator
// argument `gen_arg`: the top mantissa bits of Philox words, scaled by
// 2^-digits. (random.cpp and random_distributions.cpp hold the same helper.)
Value uniform(Builder& b, const OpCall& c, const Values& v, size_t gen_arg, const std::vector<int64_t>& dims,
              DType acc) {
  bool wide = acc == DType::F64;
  DType word = wide ? DType::U64 : DType::U32;
  int digits = wide ? 53 : 24;
  const Arg& g = c.arg(gen_arg);
  Value state = b.concatenate({b.reshape(v.at(g.operands.at(0)), {1}), b.reshape(v.at(g.operands.at(1)), {1})}, 0);
  Value bits = b.emit("rng_bit_generator", {state}, "rng_algorithm = #stablehlo<rng_algorithm PHILOX>",
                      {state.type, TensorType(word, dims)})[1];
  Value top = b.binary("shift_right_logical", bits, b.splat_int(TensorType(word, dims), (wide ? 64 : 32) - digits));
  return b.multiply(b.convert(top, acc), b.splat_float(TensorType(acc, dims), std::ldexp(1.0, -digits)));
}

Values normal(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) throw std::invalid_argument(c.op + ": expects a floating point result");
  DType acc = out.dtype == DType::F64 ? DType::F64 : DType::F32;
  TensorType at(acc, out.dims);
  std::vector<int64_t> two = out.dims;
  two.insert(two.begin(), 2);
  Value u = uniform(b, c, v, 2, two, acc);
  std::vector<int64_t> zeros(two.size(), 0), ones(two.size(), 1), lim1 = two, start2 = zeros;
  lim1[0] = 1;
  start2[0] = 1;
  Value u1 = b.reshape(b.slice(u, zeros, lim1, ones), out.dims);
  Value u2 = b.reshape(b.slice(u, start2, two, ones), out.dims);
  // 1 - u1 lies in (0, 1]: log never sees 0.
  Value r = b.unary("sqrt", b.multiply(b.splat_float(at, -2.0), b.unary("log", b.subtract(b.splat_float(at, 1.0), u1))));
  Value z = b.multiply(r, b.unary("cosine", b.multiply(u2, b.splat_float(at, 2.0 * M_PI))));
  // mean / std: a tensor operand, or a float argument (structural, as the schema makes it).
  auto arg = [&](size_t i) {
    const Arg& a = c.arg(i);
    if (a.kind == Arg::Kind::Double) return b.splat_float(at, a.d);
    return b.broadcast_to(b.convert(operand(c, v, i), acc), out.dims);
  };
  Value stdv = arg(1);
  if (c.arg(1).kind == Arg::Kind::Tensor)
    ew::runtime_check(b, b.compare(stdv, b.splat_float(at, 0), "LT"), "normal expects all elements of std >= 0.0");
  return Values{b.convert(b.add(arg(0), b.multiply(z, stdv)), out.dtype)};
}
TORCH_TPU_LOWERING("normal.Tensor_float", normal);
TORCH_TPU_LOWERING("normal.float_Tensor", normal);
TORCH_TPU_LOWERING("normal.Tensor_Tensor", normal);

}  // namespace
}  // namespace torch_tpu::ops
