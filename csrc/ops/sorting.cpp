// Sorting and selection: sort, topk, kthvalue, median. All are one stable
// StableHLO sort of (values, int64 positions) along a dimension, with the
// CPU's NaN order: NaN is larger than every number (last ascending, first
// descending), and equal values keep their original order.
#include <cmath>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

// a sorts before b: a < b (a > b descending), NaN counting as the largest.
Value sorts_before(Builder& b, const Value& x, const Value& y, bool descending) {
  Value ordered = b.compare(x, y, descending ? "GT" : "LT");
  if (!hlo::is_float(x.type.dtype)) return ordered;
  Value x_nan = b.compare(x, x, "NE"), y_nan = b.compare(y, y, "NE");
  Value nan_first = descending ? b.binary("and", x_nan, b.unary("not", y_nan))
                               : b.binary("and", y_nan, b.unary("not", x_nan));
  return b.binary("or", ordered, nan_first);
}

// (values, indices) of x sorted along dim, stably.
Values sort_along(Builder& b, const Value& x, int64_t dim, bool descending) {
  TensorType itype(DType::I64, x.type.dims);
  if (x.type.rank() == 0) return Values{x, b.splat_int(itype, 0)};
  if (x.type.numel() == 0) return Values{x, b.splat_int(itype, 0)};
  Value pos = b.iota(itype, dim);
  TensorType e(x.type.dtype, {}), ie(DType::I64, {});
  hlo::RegionBody cmp = [descending](Builder& rb, const Values& a) {
    return Values{sorts_before(rb, a[0], a[1], descending)};
  };
  return b.emit("sort", {x, pos}, "dimension = " + std::to_string(dim) + " : i64, is_stable = true",
                {x.type, itype}, {{{e, e, ie, ie}, cmp}});
}

// Elements [start, start + n) of x along dim.
Value take(Builder& b, const Value& x, int64_t dim, int64_t start, int64_t n) {
  std::vector<int64_t> lo(x.type.rank(), 0), hi = x.type.dims, st(x.type.rank(), 1);
  lo[dim] = start;
  hi[dim] = start + n;
  return b.slice(x, lo, hi, st);
}

// sort(Tensor self, int dim=-1, bool descending=False)
TORCH_TPU_LOWERING("sort", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  return sort_along(b, x, wrap_dim(c.arg(1).i, x.type.rank()), c.arg(2).b);
});

// sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False):
// every sort here is stable, which is a valid unstable sort too.
TORCH_TPU_LOWERING("sort.stable", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  return sort_along(b, x, wrap_dim(c.arg(2).i, x.type.rank()), c.arg(3).b);
});

// topk of a float tensor of up to 32 bits through XLA's TopK (chlo.top_k,
// along the last dimension of a [rows, n] view): XLA's CPU backend runs it as
// a partial sort per row, where the full sort with a comparator region costs
// ~0.5 ms for a MoE router's [64, 64] (k = 8) against ~25 us. TopK orders by
// IEEE total order with ties by lowest index, so the keys are made to match
// the CPU's order first: -0.0 becomes 0.0 (equal values keep their order),
// every NaN becomes the largest key (the smallest for largest=False, where the
// keys are negated). The values are then read back from x at the indices, so
// they keep their dtype, sign of zero and NaN payload.
Values topk_by_total_order(Builder& b, const Value& x, int64_t dim, int64_t k, bool largest) {
  const int64_t rank = x.type.rank(), n = x.type.dims[dim];
  std::vector<int64_t> to_last(rank);  // dim moved last; its own inverse's shape below
  for (int64_t d = 0, j = 0; d < rank; ++d)
    if (d != dim) to_last[j++] = d;
  to_last[rank - 1] = dim;
  Value moved = b.transpose(b.convert(x, DType::F32), to_last);
  const int64_t rows = n == 0 ? 0 : moved.type.numel() / n;
  Value key = b.reshape(moved, {rows, n});
  if (!largest) key = b.negate(key);
  key = b.select(b.compare(key, b.splat_float(key.type, 0.0), "EQ"), b.splat_float(key.type, 0.0), key);
  // A NaN with the sign bit set is below -inf in total order, a positive one above +inf.
  TensorType bits(DType::I32, key.type.dims);
  Value nan_key = b.bitcast_convert(b.splat_int(bits, largest ? 0x7fc00000 : int32_t(0xffc00000)), key.type);
  key = b.select(b.compare(key, key, "NE"), nan_key, key);
  Values top = b.emit("chlo.top_k", {key}, "k = " + std::to_string(k) + " : i64",
                      {TensorType(DType::F32, {rows, k}), TensorType(DType::I32, {rows, k})});
  Value idx = b.convert(top[1], DType::I64);
  // Flat positions in `moved` (row-major [rows, n]) to read the values from.
  TensorType itype(DType::I64, {rows, k});
  Value flat = b.add(b.multiply(b.iota(itype, 0), b.splat_int(itype, n)), idx);
  Value source = b.reshape(b.transpose(x, to_last), {rows * n});
  Value vals = b.gather_elements_1d(source, flat);
  std::vector<int64_t> moved_dims = moved.type.dims;
  moved_dims[rank - 1] = k;
  std::vector<int64_t> back(rank);  // inverse of to_last
  for (int64_t d = 0; d < rank; ++d) back[to_last[d]] = d;
  return Values{b.transpose(b.reshape(vals, moved_dims), back),
                b.transpose(b.reshape(idx, moved_dims), back)};
}

// topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True):
// always sorted, which `sorted=False` allows.
TORCH_TPU_LOWERING("topk", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  int64_t dim = wrap_dim(c.arg(2).i, x.type.rank());
  DType dt = x.type.dtype;
  if (x.type.rank() > 0 && x.type.numel() > 0 && c.arg(1).i > 0 &&
      (dt == DType::F32 || dt == DType::BF16 || dt == DType::F16))
    return topk_by_total_order(b, x, dim, c.arg(1).i, c.arg(3).b);
  Values s = sort_along(b, x, dim, c.arg(3).b);
  if (x.type.rank() == 0) return s;
  int64_t k = c.arg(1).i;
  return Values{take(b, s[0], dim, 0, k), take(b, s[1], dim, 0, k)};
});

// kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False): the k-th
// smallest (1-based), NaN counting as the largest.
TORCH_TPU_LOWERING("kthvalue", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  int64_t dim = nonempty_reduction_dim("kthvalue", x.type, c.arg(2).i);
  if (x.type.numel() == 0 && x.type.rank() > 0)  // an empty other dim: an empty result
    return Values{b.splat_int(c.outputs[0], 0), b.splat_int(c.outputs[1], 0)};
  Values s = sort_along(b, x, dim, false);
  if (x.type.rank() == 0) return s;
  int64_t k = c.arg(1).i;
  if (k < 1 || k > x.type.dims[dim]) throw std::invalid_argument("kthvalue: k out of range");
  return Values{b.reshape(take(b, s[0], dim, k - 1, 1), c.outputs[0].dims),
                b.reshape(take(b, s[1], dim, k - 1, 1), c.outputs[1].dims)};
});

// Sum of x over dim (i64).
Value sum_over(Builder& b, const Value& x, int64_t dim) {
  Value zero = b.constant_int(x.type.dtype, 0);
  hlo::RegionBody add = [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; };
  return b.reduce({x}, {zero}, {dim}, add)[0];
}

// The CPU's median along dim: the lower median, or the first NaN of a slice
// that has one (a stable ascending sort puts it at n - nan_count).
Values median_along(Builder& b, const Value& x, int64_t dim) {
  Values s = sort_along(b, x, dim, false);
  int64_t n = x.type.dims[dim];
  if (!hlo::is_float(x.type.dtype))
    return Values{take(b, s[0], dim, (n - 1) / 2, 1), take(b, s[1], dim, (n - 1) / 2, 1)};
  TensorType itype(DType::I64, x.type.dims);
  Value nans = sum_over(b, b.convert(b.compare(x, x, "NE"), DType::I64), dim);
  Value nn = b.splat_int(nans.type, n);
  Value at = b.select(b.compare(nans, b.splat_int(nans.type, 0), "GT"), b.subtract(nn, nans),
                      b.splat_int(nans.type, (n - 1) / 2));
  std::vector<int64_t> keep;
  for (int64_t d = 0; d < x.type.rank(); ++d)
    if (d != dim) keep.push_back(d);
  Value hit = b.compare(b.iota(itype, dim), b.broadcast_in_dim(at, x.type.dims, keep), "EQ");
  // Pick the one hit per slice: a max reduction over a select (values) and a sum (positions).
  Value lowest = b.splat_float(x.type, -INFINITY);
  Value picked = b.select(hit, s[0], lowest);
  hlo::RegionBody mx = [](Builder& rb, const Values& a) {
    Value m = rb.select(rb.compare(a[1], a[1], "NE"), a[1], rb.maximum(a[0], a[1]));
    return Values{rb.select(rb.compare(a[0], a[0], "NE"), a[0], m)};
  };
  Value val = b.reduce({picked}, {b.constant_float(x.type.dtype, -INFINITY)}, {dim}, mx)[0];
  Value idx = sum_over(b, b.select(hit, s[1], b.splat_int(itype, 0)), dim);
  std::vector<int64_t> kd = x.type.dims;
  kd[dim] = 1;
  return Values{b.reshape(val, kd), b.reshape(idx, kd)};
}

// median.dim(Tensor self, int dim, bool keepdim=False) -> (values, indices)
TORCH_TPU_LOWERING("median.dim", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  if (x.type.dtype == DType::Pred) not_implemented_for("median_out", x.type.dtype);  // the CPU's kernel takes no bool
  int64_t dim = nonempty_reduction_dim("median", x.type, c.arg(1).i);
  if (x.type.rank() == 0) return Values{x, b.splat_int(c.outputs[1], 0)};
  if (x.type.numel() == 0) return Values{b.splat_int(c.outputs[0], 0), b.splat_int(c.outputs[1], 0)};
  Values r = median_along(b, x, dim);
  return Values{b.reshape(r[0], c.outputs[0].dims), b.reshape(r[1], c.outputs[1].dims)};
});

// median(Tensor self): over all elements; NaN if any.
TORCH_TPU_LOWERING("median", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  if (x.type.dtype == DType::Pred) not_implemented_for("median_cpu", x.type.dtype);
  if (x.type.numel() == 0) return Values{b.splat_float(c.outputs[0], NAN)};
  Values r = median_along(b, b.reshape(x, {x.type.numel()}), 0);
  return Values{b.reshape(r[0], {})};
});

}  // namespace
}  // namespace torch_tpu::ops
