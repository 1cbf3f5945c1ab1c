// unfold_backward(grad_in, input_sizes, dim, size, step): the gradient of
// x.unfold(dim, size, step). grad_in has `dim` replaced by the window count n
// and a trailing window axis of `size`; element k of window w came from
// position w * step + k. Each k's windows are spread to their positions with
// an interior pad (step - 1 zeros between windows) and the `size` spreads
// summed. The CPU adds an element's windows in increasing w (decreasing k),
// rounding to the result dtype after each add; so does this (bf16 results).
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

TORCH_TPU_LOWERING("unfold_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& g = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  int64_t rank = out.rank(), dim = c.arg(2).i, size = c.arg(3).i, step = c.arg(4).i;
  if (rank == 0) dim = 0;
  else if (dim < 0) dim += rank;
  if (size <= 0 || step <= 0) throw std::invalid_argument("unfold_backward: size and step must be positive");
  DType ct = compute_type(out.dtype);
  Value zero = b.constant_float(ct, 0);
  Value acc = b.splat_float(TensorType(ct, out.dims), 0);
  if (out.numel() == 0 || g.type.numel() == 0) return Values{b.convert(acc, out.dtype)};
  // A 0-d input unfolds to one window of one element over a virtual length-1 axis.
  if (rank == 0) return Values{b.convert(b.reshape(g, {}), out.dtype)};
  int64_t gr = g.type.rank();  // rank + 1
  int64_t n = g.type.dims[dim], len = out.dims[dim];
  std::vector<int64_t> start(gr, 0), limit = g.type.dims, strides(gr, 1);
  std::vector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  interior[dim] = step - 1;
  for (int64_t k = size - 1; k >= 0; --k) {
    start[gr - 1] = k;
    limit[gr - 1] = k + 1;
    Value part = b.reshape(b.convert(b.slice(g, start, limit, strides), ct),
                           std::vector<int64_t>(g.type.dims.begin(), g.type.dims.end() - 1));
    low[dim] = k;
    high[dim] = len - (k + (n - 1) * step + 1);  // >= 0: the last window ends inside
    acc = b.convert(b.convert(b.add(acc, b.pad(part, zero, low, high, interior)), out.dtype), ct);
  }
  return Values{b.convert(acc, out.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
