// slice_scatter(self, src, dim, start, end, step): self with self[start:end:step]
// (along dim) replaced by src. Compiled backward graphs of slicing emit it.
// src is padded into place (interior padding step-1) and selected by a mask.
#include <algorithm>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

Values slice_scatter_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value self = b.convert(operand(c, v, 0), out.dtype), src = b.convert(operand(c, v, 1), out.dtype);
  int64_t rank = out.rank();
  // the CPU slices a clone of self first, which a 0-d self refuses
  if (rank == 0) throw std::out_of_range("slice() cannot be applied to a 0-dim tensor.");
  int64_t dim = wrap_dim(c.arg(2).i, rank);
  int64_t size = rank == 0 ? 1 : out.dims[dim];
  int64_t start = c.arg(3).is_none() ? 0 : c.arg(3).i;
  if (start < 0) start += size;
  start = std::clamp<int64_t>(start, 0, size);
  int64_t end = c.args.size() > 4 && !c.arg(4).is_none() ? c.arg(4).i : size;
  if (end < 0) end += size;
  end = std::clamp<int64_t>(end, start, size);
  int64_t step = c.args.size() > 5 && !c.arg(5).is_none() ? c.arg(5).i : 1;
  if (step <= 0) throw std::invalid_argument("slice step must be positive");
  // The CPU's check: src has exactly the slice's shape (a 0-d src read past its shape here).
  std::vector<int64_t> slice = out.dims;
  if (rank > 0) slice[dim] = (end - start + step - 1) / step;
  if (src.type.dims != slice)
    throw std::invalid_argument("expected src to have a size equal to the slice of self. src size = " +
                                hlo::int_list(src.type.dims) + ", slice size = " + hlo::int_list(slice));
  if (rank == 0 || out.numel() == 0 || src.type.numel() == 0) return {self};
  int64_t n = src.type.dims[dim];
  std::vector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  low[dim] = start;
  interior[dim] = step - 1;
  high[dim] = size - (start + (n - 1) * step + 1);
  Value placed = b.pad(src, b.constant_float(out.dtype, 0), low, high, interior);
  TensorType it(DType::I64, out.dims);
  Value p = b.iota(it, dim);
  Value rel = b.subtract(p, b.splat_int(it, start));
  Value in = b.binary("and", b.compare(rel, b.splat_int(it, 0), "GE"),
                      b.compare(rel, b.splat_int(it, (n - 1) * step + 1), "LT"));
  Value on_step = b.compare(b.binary("remainder", rel, b.splat_int(it, step)), b.splat_int(it, 0), "EQ");
  return {b.select(b.binary("and", in, on_step), placed, self)};
}

TORCH_TPU_LOWERING("slice_scatter", slice_scatter_rule);

}  // namespace
}  // namespace torch_tpu::ops
