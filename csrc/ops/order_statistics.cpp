// mode and nanmedian along a dimension (values and indices). The reduced
// dimension is moved last; results then drop it (the meta kernel's output
// dims say whether it is kept as size 1).
#include <cmath>
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

struct Moved {
  Value x;      // the input with `dim` last (at least 1-d)
  int64_t n;    // its size along dim
};

Moved move_last(Builder& b, Value x, int64_t dim) {
  if (x.type.rank() == 0) x = b.reshape(x, {1});
  int64_t r = x.type.rank();
  if (dim < 0) dim += r;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < r; ++d)
    if (d != dim) perm.push_back(d);
  perm.push_back(dim);
  return {b.transpose(x, perm), x.type.dims[dim]};
}

Value reduce_last(Builder& b, const Value& x, const std::string& op) {
  hlo::RegionBody body = [op](Builder& rb, const Values& a) { return Values{rb.binary(op, a[0], a[1])}; };
  Value init = op == "minimum" ? b.highest(x.type.dtype) : op == "maximum" ? b.lowest(x.type.dtype)
                                                                         : b.constant_int(x.type.dtype, 0);
  return b.reduce({x}, {init}, {x.type.rank() - 1}, body)[0];
}

// mode(self, dim=-1, keepdim=False): the most frequent value (the smallest of
// equally frequent ones) and the last index holding it, which is what the
// CPU's sort-then-scan reports. Frequencies by comparing every pair of the
// slice: O(n^2) per slice. Bool compares as i8. A NaN counts once (it equals
// nothing, as in the CPU's scan) and sorts last, so it is the mode only of an
// all-NaN slice, at its first index. (A slice mixing NaN and numbers has no
// defined CPU result: its std::sort gets a comparator NaN breaks.)
Values mode_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType &vt = c.outputs[0], &it = c.outputs[1];
  Value in = operand(c, v, 0);
  nonempty_reduction_dim("mode", in.type, c.arg(1).i);
  if (vt.numel() == 0) return {b.splat_int(vt, 0), b.splat_int(it, 0)};
  Moved m = move_last(b, in.type.dtype == DType::Pred ? b.convert(in, DType::I8) : in, c.arg(1).i);
  Value x = m.x;
  int64_t r = x.type.rank();
  std::vector<int64_t> pair = x.type.dims, keep;
  pair.push_back(m.n);
  for (int64_t d = 0; d < r; ++d) keep.push_back(d);
  std::vector<int64_t> other = keep;
  other.back() = r;  // x_j along the new last dim
  TensorType pi(DType::I64, pair);
  Value self_pair = b.compare(b.iota(pi, r - 1), b.iota(pi, r), "EQ");
  Value eq = b.binary("or", b.compare(b.broadcast_in_dim(x, pair, keep), b.broadcast_in_dim(x, pair, other), "EQ"),
                      self_pair);
  hlo::RegionBody add = [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; };
  Value freq = b.reduce({b.select(eq, b.splat_int(pi, 1), b.splat_int(pi, 0))}, {b.constant_int(DType::I64, 0)},
                        {r}, add)[0];
  std::vector<int64_t> bmap;
  for (int64_t d = 0; d + 1 < r; ++d) bmap.push_back(d);
  Value maxf = b.broadcast_in_dim(reduce_last(b, freq, "maximum"), x.type.dims, bmap);
  Value number = b.compare(x, x, "EQ");
  Value cand = b.select(b.binary("and", b.compare(freq, maxf, "EQ"), number), x,
                        b.broadcast_to(b.highest(x.type.dtype), x.type.dims));
  Value mode = reduce_last(b, cand, "minimum");
  TensorType idx_t(DType::I64, x.type.dims);
  Value iota = b.iota(idx_t, r - 1);
  Value at = b.select(b.compare(x, b.broadcast_in_dim(mode, x.type.dims, bmap), "EQ"), iota, b.splat_int(idx_t, -1));
  Value idx = reduce_last(b, at, "maximum");
  if (hlo::is_float(x.type.dtype)) {
    // all NaN: NaN at the first index
    Value numbers = reduce_last(b, b.convert(number, DType::I8), "maximum");
    Value nan_slice = b.compare(numbers, b.splat_int(numbers.type, 0), "EQ");
    mode = b.select(nan_slice, b.splat_float(mode.type, NAN), mode);
    idx = b.select(nan_slice, b.splat_int(idx.type, 0), idx);
  }
  return {b.convert(b.reshape(mode, vt.dims), vt.dtype), b.convert(b.reshape(idx, it.dims), it.dtype)};
}

TORCH_TPU_LOWERING("mode", mode_rule);

// Sorts the last dim ascending (NaN last, ties by index) carrying indices.
Values sort_with_index(Builder& b, const Value& x) {
  int64_t r = x.type.rank();
  Value idx = b.iota(TensorType(DType::I64, x.type.dims), r - 1);
  bool fl = hlo::is_float(x.type.dtype);
  hlo::RegionBody less = [fl](Builder& rb, const Values& a) {
    Value lt = rb.compare(a[0], a[1], "LT");
    if (fl) lt = rb.binary("or", lt, rb.binary("and", rb.compare(a[0], a[0], "EQ"), rb.compare(a[1], a[1], "NE")));
    return Values{lt};
  };
  TensorType ks(x.type.dtype, {}), is(DType::I64, {});
  return b.emit("sort", {x, idx}, "dimension = " + std::to_string(r - 1) + " : i64, is_stable = true",
                {x.type, idx.type}, {{{ks, ks, is, is}, less}});
}

// Element `pos` ([batch] i64) of each row of `x` ([batch, n]).
Value take_at(Builder& b, const Value& x, const Value& pos) {
  TensorType t(DType::I64, x.type.dims);
  int64_t r = x.type.rank();
  std::vector<int64_t> bmap;
  for (int64_t d = 0; d + 1 < r; ++d) bmap.push_back(d);
  Value hit = b.compare(b.iota(t, r - 1), b.broadcast_in_dim(pos, x.type.dims, bmap), "EQ");
  // Exactly one hit per row: OR the hit's bits in (NaN and infinities pass unchanged).
  bool pred = x.type.dtype == DType::Pred;
  int bits = pred ? 8 : hlo::dtype_bits(x.type.dtype);
  DType ut = bits == 8 ? DType::U8 : bits == 16 ? DType::U16 : bits == 32 ? DType::U32 : DType::U64;
  TensorType u(ut, x.type.dims);
  Value raw = pred ? b.convert(x, DType::U8) : b.bitcast_convert(x, u);
  Value sel = b.select(hit, raw, b.splat_int(u, 0));
  Value got = reduce_last(b, sel, "or");
  if (pred) return b.convert(got, DType::Pred);
  return b.bitcast_convert(got, TensorType(x.type.dtype, got.type.dims));
}

// nanmedian of the last dim: the lower median of the non-NaN values (NaN
// when a row has none) and its index; ties keep the earliest index.
Values nanmedian_last(Builder& b, const Value& x) {
  Values s = sort_with_index(b, x);
  TensorType t(DType::I64, x.type.dims);
  Value count = hlo::is_float(x.type.dtype)
                    ? reduce_last(b, b.select(b.compare(x, x, "EQ"), b.splat_int(t, 1), b.splat_int(t, 0)), "add")
                    : b.splat_int(TensorType(DType::I64, std::vector<int64_t>(x.type.dims.begin(), x.type.dims.end() - 1)),
                                  x.type.dims.back());
  // (count - 1) / 2, and 0 for an all-NaN row, as C++ division truncates.
  Value one = b.splat_int(count.type, 1);
  Value pos = b.divide(b.maximum(b.subtract(count, one), b.splat_int(count.type, 0)), b.splat_int(count.type, 2));
  return {take_at(b, s[0], pos), take_at(b, s[1], pos)};
}

// The CPU's median kernels take no bool (NotImplementedError, named by kernel).
void require_median_dtype(const char* kernel, DType t) {
  if (t == DType::Pred) not_implemented_for(kernel, t);
}

// nanmedian.dim(self, dim, keepdim=False) -> (values, indices)
TORCH_TPU_LOWERING("nanmedian.dim", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType &vt = c.outputs[0], &it = c.outputs[1];
  require_median_dtype("median_out", operand(c, v, 0).type.dtype);
  nonempty_reduction_dim("median", operand(c, v, 0).type, c.arg(1).i);  // the CPU names median
  if (vt.numel() == 0) return Values{b.splat_int(vt, 0), b.splat_int(it, 0)};
  Moved m = move_last(b, operand(c, v, 0), c.arg(1).i);
  Values r = nanmedian_last(b, m.x);
  return Values{b.reshape(r[0], vt.dims), b.convert(b.reshape(r[1], it.dims), it.dtype)};
});

// nanmedian(self): over every element; empty input gives NaN like the CPU.
TORCH_TPU_LOWERING("nanmedian", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& vt = c.outputs[0];
  Value x = operand(c, v, 0);
  require_median_dtype("median_cpu", x.type.dtype);
  if (x.type.numel() == 0) return Values{b.convert(b.splat_float(TensorType(DType::F32, vt.dims), NAN), vt.dtype)};
  Values r = nanmedian_last(b, b.reshape(x, {x.type.numel()}));
  return Values{b.reshape(r[0], vt.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
