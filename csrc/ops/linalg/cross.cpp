// linalg_cross: the 3-vector cross product along `dim`, after broadcasting.
// Computed in the result dtype with the same products and differences as the
// CPU kernel (a1 b2 - a2 b1, ...), so integers wrap and floats round alike.
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

TORCH_TPU_ACCEPTS_COMPLEX("linalg_cross");

TORCH_TPU_LOWERING("linalg_cross", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (out.dtype == DType::Pred)
    throw NotImplemented(c.op + ": not implemented for " + std::string(hlo::dtype_name(out.dtype)));
  int64_t r = out.rank(), dim = c.arg(2).i;
  if (dim < -r || dim >= r) throw std::out_of_range(c.op + ": dimension out of range");
  if (dim < 0) dim += r;
  if (out.dims[dim] != 3) throw std::invalid_argument(c.op + ": dimension must have length 3");
  Value x = to_type(b, operand(c, v, 0), out), y = to_type(b, operand(c, v, 1), out);
  // Component i of `t` (keeping the dim, size 1).
  auto comp = [&](const Value& t, int64_t i) {
    std::vector<int64_t> start(r, 0), limit = out.dims, strides(r, 1);
    start[dim] = i;
    limit[dim] = i + 1;
    return b.slice(t, start, limit, strides);
  };
  // Half types: the CPU's c10::Half/BFloat16 arithmetic rounds every product
  // and the difference; spelled out in f32 (the plugin may otherwise keep the
  // products in f32).
  bool half = out.dtype == DType::F16 || out.dtype == DType::BF16;
  auto rnd = [&](const Value& a) { return half ? b.convert(b.convert(a, out.dtype), DType::F32) : a; };
  if (half) x = b.convert(x, DType::F32), y = b.convert(y, DType::F32);
  auto part = [&](int64_t i, int64_t j) {
    return rnd(b.subtract(rnd(b.multiply(comp(x, i), comp(y, j))), rnd(b.multiply(comp(x, j), comp(y, i)))));
  };
  return Values{b.convert(b.concatenate({part(1, 2), part(2, 0), part(0, 1)}, dim), out.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
