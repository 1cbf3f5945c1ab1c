// nonzero_static(self, *, size, fill_value=-1): the coordinates of the first
// `size` non-zero elements (row-major order) as a [size, ndim] int64 tensor,
// rows past the non-zero count filled with fill_value. The shape is static,
// so unlike nonzero (eager/nonzero.cpp) nothing is read back to the host:
// non-zero positions keep their flat index as a sort key, the rest sort last.
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

TORCH_TPU_ACCEPTS_COMPLEX("nonzero_static");

TORCH_TPU_LOWERING("nonzero_static", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  int64_t size = out.dims.at(0), rank = x.type.rank(), total = x.type.numel();
  if (size == 0 || rank == 0) return Values{b.splat_int(out, 0)};  // [size, 0] holds no values
  TensorType col(DType::I64, {size});
  Value first;
  if (total == 0) {
    first = b.splat_int(col, total);
  } else {
    TensorType flat(DType::I64, {total});
    Value nz = b.convert(b.reshape(x, {total}), DType::Pred);
    Value keys = b.select(nz, b.iota(flat, 0), b.splat_int(flat, total));
    TensorType s(DType::I64, {});
    Value sorted = b.emit("sort", {keys}, "dimension = 0 : i64, is_stable = true", {flat},
                          {{{s, s}, [](Builder& r, const Values& a) { return Values{r.compare(a[0], a[1], "LT")}; }}})[0];
    if (size <= total) first = b.slice(sorted, {0}, {size}, {1});
    else first = b.pad(sorted, b.constant_int(DType::I64, total), {0}, {size - total}, {0});
  }
  Value valid = b.compare(first, b.splat_int(col, total), "LT");
  Value fill = b.splat_int(col, c.arg(2).i);
  std::vector<Value> coords(rank);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    Value q = b.divide(first, b.splat_int(col, stride));
    if (d > 0) q = b.binary("remainder", q, b.splat_int(col, x.type.dims[d]));
    coords[d] = b.reshape(b.select(valid, q, fill), {size, 1});
    stride *= x.type.dims[d];
  }
  return Values{b.concatenate(coords, 1)};
});

}  // namespace
}  // namespace torch_tpu::ops
