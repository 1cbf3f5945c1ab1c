// isin: every element compared with every test element, then any-reduced.
// The test elements are few in practice (special-token ids in generate), so
// the [elements..., T] comparison is cheaper than the CPU's sort path.
#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// Args: (elements, test_elements, assume_unique, invert); either of the first
// two may be a Scalar (a 0-d operand).
Values isin_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType t = result_type(c, {0, 1});
  Value x = b.convert(operand(c, v, 0), t);
  Value test = b.convert(operand(c, v, 1), t);
  int64_t n = test.type.numel();
  bool invert = c.arg(3).b;
  if (n == 0 || out.numel() == 0) return {b.splat_int(out, invert ? 1 : 0)};
  test = b.reshape(test, {n});
  std::vector<int64_t> dims = out.dims, x_map;
  dims.push_back(n);
  for (int64_t i = 0; i < out.rank(); ++i) x_map.push_back(i);
  Value eq = b.compare(b.broadcast_in_dim(x, dims, x_map), b.broadcast_in_dim(test, dims, {out.rank()}), "EQ");
  Value any = b.reduce({eq}, {b.constant_bool(false)}, {out.rank()}, [](Builder& r, const Values& a) {
    return Values{r.binary("or", a[0], a[1])};
  })[0];
  if (invert) any = b.unary("not", any);
  return {any};
}

TORCH_TPU_LOWERING("isin.Tensor_Tensor", isin_rule);
TORCH_TPU_LOWERING("isin.Tensor_Scalar", isin_rule);
TORCH_TPU_LOWERING("isin.Scalar_Tensor", isin_rule);

}  // namespace
}  // namespace torch_tpu::ops
