// searchsorted / bucketize by counting: the insertion point of v in a sorted
// row is the number of row elements b with !(b >= v) (left) or !(b > v)
// (right), the predicates the CPU's binary search tests; NaNs (sorted last)
// are counted as that search counts them. O(values x boundaries) compares, one fused
// reduce; fine for the boundary counts these ops see.
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/torch_dtype_name.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// seq: [..., K] (or [K] shared by every value), vals: [..., J] (any shape when seq is 1-D).
Value insertion_points(Builder& b, const Value& seq, const Value& vals, bool right, const TensorType& out) {
  int64_t k = seq.type.dims.back();
  std::vector<int64_t> dims = vals.type.dims;
  dims.push_back(k);
  int64_t vr = vals.type.rank();
  std::vector<int64_t> vmap, smap;
  for (int64_t d = 0; d < vr; ++d) vmap.push_back(d);
  if (seq.type.rank() == 1) {
    smap = {vr};
  } else {
    for (int64_t d = 0; d + 1 < vr; ++d) smap.push_back(d);
    smap.push_back(vr);
  }
  Value s = b.broadcast_in_dim(seq, dims, smap), x = b.broadcast_in_dim(vals, dims, vmap);
  Value before = b.unary("not", b.compare(s, x, right ? "GT" : "GE"));
  TensorType it(DType::I64, dims);
  hlo::RegionBody add = [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; };
  auto count = [&](const Value& flag) {
    return b.reduce({b.select(flag, b.splat_int(it, 1), b.splat_int(it, 0))}, {b.constant_int(DType::I64, 0)}, {vr},
                    add)[0];
  };
  if (!hlo::is_float(seq.type.dtype)) return b.convert(b.reshape(count(before), out.dims), out.dtype);
  // The binary search reaches the NaN tail only past every number; there it counts all NaNs.
  Value num = b.compare(s, s, "EQ");
  Value n = count(b.binary("and", before, num)), numbers = count(num);
  Value nans = b.subtract(b.splat_int(n.type, k), numbers);
  n = b.add(n, b.select(b.compare(n, numbers, "EQ"), nans, b.splat_int(n.type, 0)));
  return b.convert(b.reshape(n, out.dims), out.dtype);
}

// seq's rows reordered by sorter (take_along_dim on the last dimension).
Value apply_sorter(Builder& b, const Value& seq, const Value& sorter) {
  int64_t r = seq.type.rank();
  std::vector<int64_t> one = seq.type.dims;
  one.push_back(1);
  TensorType t(DType::I64, seq.type.dims);
  Values parts;
  for (int64_t d = 0; d < r; ++d) parts.push_back(b.reshape(d + 1 == r ? b.convert(sorter, DType::I64) : b.iota(t, d), one));
  Value coords = b.concatenate(parts, r);
  std::vector<int64_t> dims, ones(r, 1);
  for (int64_t d = 0; d < r; ++d) dims.push_back(d);
  return b.emit1("gather", {seq, coords},
                 "dimension_numbers = #stablehlo.gather<collapsed_slice_dims = " + hlo::int_list(dims) +
                     ", start_index_map = " + hlo::int_list(dims) + ", index_vector_dim = " + std::to_string(r) +
                     ">, slice_sizes = " + hlo::int_array(ones) + ", indices_are_sorted = false",
                 seq.type);
}

// searchsorted.Tensor(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None)
TORCH_TPU_LOWERING("searchsorted.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType ct = result_type(c, {0, 1});
  Value seq = b.convert(operand(c, v, 0), ct), vals = b.convert(operand(c, v, 1), ct);
  bool right = c.arg(3).b || (!c.arg(4).is_none() && c.arg(4).s == "right");
  if (!c.arg(5).is_none()) {  // the CPU's sorter checks, before the others (its range is checked at run time)
    const TensorType& sorter = operand(c, v, 5).type;
    if (sorter.dims != operand(c, v, 0).type.dims)
      throw std::invalid_argument("torch.searchsorted(): boundary and sorter must have the same size, but got "
                                  "boundary tensor " + hlo::int_list(operand(c, v, 0).type.dims) +
                                  "and got sorter tensor " + hlo::int_list(sorter.dims));
    if (sorter.dtype != DType::I64)
      throw std::invalid_argument(std::string("torch.searchsorted(): sorter must be a tensor of long dtype but got "
                                              "dtype ") + torch_dtype_name(sorter.dtype));
    if (sorter.rank() > 0)
      check_in_range(b, operand(c, v, 5), 0, sorter.dims.back(), CheckKind::Runtime,
                     "torch.searchsorted(): sorter index out of range");
  }
  if (seq.type.rank() == 0)
    throw std::invalid_argument("boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                                "boundaries tensor and input value tensor must match, but we got boundaries tensor dim(0)");
  if (out.numel() == 0) return Values{b.splat_int(out, 0)};
  if (seq.type.numel() == 0) return Values{b.splat_int(out, 0)};
  if (!c.arg(5).is_none()) seq = apply_sorter(b, seq, operand(c, v, 5));
  if (vals.type.rank() == 0) vals = b.reshape(vals, {1});
  return Values{insertion_points(b, seq, vals, right, out)};
});

// bucketize.Tensor(self, boundaries, *, out_int32=False, right=False)
TORCH_TPU_LOWERING("bucketize.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType ct = result_type(c, {0, 1});
  Value vals = b.convert(operand(c, v, 0), ct), seq = b.convert(operand(c, v, 1), ct);
  // The meta kernel does not check the boundaries' rank (the CPU kernel does).
  if (seq.type.rank() != 1)
    throw std::invalid_argument("boundaries tensor must be 1 dimension, but got dim(" +
                                std::to_string(seq.type.rank()) + ")");
  if (out.numel() == 0 || seq.type.numel() == 0) return Values{b.splat_int(out, 0)};
  if (vals.type.rank() == 0) vals = b.reshape(vals, {1});
  return Values{insertion_points(b, seq, vals, c.arg(3).b, out)};
});

}  // namespace
}  // namespace torch_tpu::ops
