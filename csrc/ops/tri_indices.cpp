// tril_indices / triu_indices (the out= forms; the functional factories in
// eager/tensor_factories.cpp size the result and call them): the (row, col)
// pairs of a row x col matrix's lower (col - row <= offset) or upper
// (col - row >= offset) triangle in row-major order. The pairs are the
// selected flat positions, compacted by a stable sort of (position, or past
// the end when not selected), as nonzero_static does.
#include "ops/lowering_helpers.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

Values tri_indices(Builder& b, const OpCall& c, bool upper) {
  const TensorType& out = c.outputs[0];
  if (out.dtype != DType::I64 && out.dtype != DType::I32)
    not_implemented_for(upper ? "triu_indices" : "tril_indices", out.dtype);
  int64_t rows = c.arg(0).i, cols = c.arg(1).i, offset = c.arg(2).i;
  if (out.rank() != 2 || out.dims[0] != 2) throw std::invalid_argument(c.op + ": out must have shape [2, N]");
  int64_t n = out.dims[1], total = rows * cols;
  if (n == 0) return Values{b.splat_int(out, 0)};
  if (n > total) throw std::invalid_argument(c.op + ": out has more pairs than the matrix has elements");
  TensorType grid(DType::I64, {rows, cols});
  Value diff = b.subtract(b.iota(grid, 1), b.iota(grid, 0));
  Value selected = b.compare(diff, b.splat_int(grid, offset), upper ? "GE" : "LE");
  TensorType flat(DType::I64, {total});
  Value keys = b.select(b.reshape(selected, {total}), b.iota(flat, 0), b.splat_int(flat, total));
  TensorType s(DType::I64, {});
  Value sorted = b.emit("sort", {keys}, "dimension = 0 : i64, is_stable = true", {flat},
                        {{{s, s}, [](Builder& r, const Values& a) { return Values{r.compare(a[0], a[1], "LT")}; }}})[0];
  Value first = b.slice(sorted, {0}, {n}, {1});
  TensorType col_t(DType::I64, {n});
  Value r = b.divide(first, b.splat_int(col_t, cols)), cl = b.binary("remainder", first, b.splat_int(col_t, cols));
  Value pairs = b.concatenate({b.reshape(r, {1, n}), b.reshape(cl, {1, n})}, 0);
  return Values{b.convert(pairs, out.dtype)};
}

TORCH_TPU_LOWERING("tril_indices.out", [](Builder& b, const OpCall& c, const Values&) { return tri_indices(b, c, false); });
TORCH_TPU_LOWERING("triu_indices.out", [](Builder& b, const OpCall& c, const Values&) { return tri_indices(b, c, true); });

}  // namespace
}  // namespace torch_tpu::ops
