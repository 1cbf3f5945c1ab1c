// searchsorted / bucketize as the CPU's (and CUDA's) binary search, step for
// step: while start < end, mid = start + (end - start) / 2, and the search
// goes right where !(seq[mid] >= v) (left) or !(seq[mid] > v) (right). On a
// sequence with NaNs (sorted last) or one that is not sorted its answer
// depends on the path: a NaN counts as smaller than every value where it is
// probed, so a search can run past numbers it never probes. The path is
// followed: floor(log2 k) + 1 steps of one gather each.
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
  const TensorType& vt = vals.type;
  TensorType it(DType::I64, vt.dims);
  Value flat = b.reshape(seq, {seq.type.numel()});
  Value row_base = b.splat_int(it, 0);  // where each value's row starts in `flat`
  if (seq.type.rank() > 1) {
    Value row = b.splat_int(it, 0);
    for (int64_t d = 0; d + 1 < vt.rank(); ++d)
      row = b.add(b.multiply(row, b.splat_int(it, vt.dims[d])), b.iota(it, d));
    row_base = b.multiply(row, b.splat_int(it, k));
  }
  Value start = b.splat_int(it, 0), end = b.splat_int(it, k);
  for (int64_t span = k; span > 0; span /= 2) {
    Value active = b.compare(start, end, "LT");
    Value mid = b.add(start, b.divide(b.subtract(end, start), b.splat_int(it, 2)));
    Value probe = b.gather_elements_1d(flat, b.add(row_base, b.select(active, mid, b.splat_int(it, 0))));
    Value go_right = b.unary("not", b.compare(probe, vals, right ? "GT" : "GE"));
    start = b.select(b.binary("and", active, go_right), b.add(mid, b.splat_int(it, 1)), start);
    end = b.select(b.binary("and", active, b.unary("not", go_right)), mid, end);
  }
  return b.convert(b.reshape(start, out.dims), out.dtype);
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
