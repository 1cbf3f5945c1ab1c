// index_reduce and put: index-driven writes that index_copy / scatter do not
// cover. Both become one StableHLO scatter over element coordinates.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/torch_dtype_name.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

enum class Combine { Replace, Add, Multiply, Max, Min };

std::vector<int64_t> iota_vec(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// The CPU's amax/amin keep a NaN from either side.
Value keep_nan(Builder& b, const Value& x, const Value& y, const Value& r) {
  if (!hlo::is_float(x.type.dtype)) return r;
  return b.select(b.compare(x, x, "NE"), x, b.select(b.compare(y, y, "NE"), y, r));
}

Value combine(Builder& b, Combine how, const Value& old, const Value& upd) {
  bool pred = old.type.dtype == DType::Pred;
  switch (how) {
    case Combine::Replace: return upd;
    case Combine::Add: return pred ? b.binary("or", old, upd) : b.add(old, upd);
    case Combine::Multiply: return pred ? b.binary("and", old, upd) : b.multiply(old, upd);
    case Combine::Max: return keep_nan(b, old, upd, b.maximum(old, upd));
    case Combine::Min: return keep_nan(b, old, upd, b.minimum(old, upd));
  }
  return upd;
}

// self with updates[i] combined into self[coords[i]]; coords is [*upd.dims, rank].
Value scatter_at(Builder& b, const Value& self, const Value& coords, const Value& updates, Combine how) {
  int64_t rank = self.type.rank();
  TensorType elem(self.type.dtype, {});
  hlo::RegionBody body = [how](Builder& rb, const Values& a) { return Values{combine(rb, how, a[0], a[1])}; };
  return b.emit("scatter", {self, coords, updates},
                "scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = " +
                    hlo::int_list(iota_vec(rank)) + ", scatter_dims_to_operand_dims = " +
                    hlo::int_list(iota_vec(rank)) + ", index_vector_dim = " + std::to_string(updates.type.rank()) +
                    ">, indices_are_sorted = false, unique_indices = false",
                {self.type}, {{{elem, elem}, body}})[0];
}

// Coordinates of every element of a tensor of `dims`, with `along` standing in along `dim`.
Value coords_with(Builder& b, const std::vector<int64_t>& dims, int64_t dim, const Value& along) {
  std::vector<int64_t> one = dims;
  one.push_back(1);
  TensorType t(DType::I64, dims);
  Values parts;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d)
    parts.push_back(b.reshape(d == dim ? along : b.iota(t, d), one));
  return b.concatenate(parts, static_cast<int64_t>(dims.size()));
}

// The value written where include_self=False, before the reduction.
Value identity(Builder& b, DType dt, const std::string& r) {
  if (r == "prod") return b.constant_int(dt, 1);
  if (r == "mean") return b.constant_int(dt, 0);
  bool max = r == "amax";
  if (hlo::is_float(dt)) return b.constant_float(dt, max ? -INFINITY : INFINITY);
  return max ? b.lowest(dt) : b.highest(dt);
}

// index_reduce(self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True)
Values index_reduce_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType dt = out.dtype;
  Value self = b.convert(operand(c, v, 0), dt);
  Value index = operand(c, v, 2);
  Value source = b.convert(operand(c, v, 3), dt);
  const std::string& r = c.arg(4).s;
  bool include_self = c.arg(5).b;
  // The CPU's checks, in its order: the reduction, the index dtype, one dtype for self and source.
  Combine how = r == "prod" ? Combine::Multiply : r == "mean" ? Combine::Add : r == "amax" ? Combine::Max
              : r == "amin" ? Combine::Min
              : throw std::invalid_argument("index_reduce(): Expected reduce to be one of prod, mean, amax or amin "
                                            "but got " + r + ".");
  if (index.type.dtype != DType::I64 && index.type.dtype != DType::I32)
    throw std::invalid_argument(std::string("index_reduce_(): Expected dtype int32/int64 for index but got: ") +
                                torch_dtype_name(index.type.dtype));
  DType self_t = operand(c, v, 0).type.dtype, source_t = operand(c, v, 3).type.dtype;
  if (self_t != source_t)
    throw std::invalid_argument(std::string("index_reduce_(): self (") + torch_dtype_name(self_t) + ") and source (" +
                                torch_dtype_name(source_t) + ") must have the same scalar type");
  if (index.type.rank() > 1)
    throw std::out_of_range("index_reduce_(): Index is supposed to be a vector, but got dim: " +
                            std::to_string(index.type.rank()) + " with type: " + torch_dtype_name(index.type.dtype) +
                            " and size: " + hlo::int_list(index.type.dims));
  if (self.type.rank() == 0) {  // a 0-d self is one slice; the CPU takes one index only
    if (index.type.numel() != 1)
      throw std::out_of_range("index_reduce(): Dimension specified as 0 but tensor has no dimensions");
    self = b.reshape(self, {1});
    source = b.reshape(source, {1});
  }
  int64_t rank = self.type.rank();
  int64_t dim = wrap_dim(c.arg(1).i, rank);  // an out-of-range dim read past dims (a crash)
  int64_t size = self.type.dims[dim], n = index.type.numel();
  int64_t source_n = source.type.rank() == 0 ? 1 : source.type.dims[std::min<int64_t>(dim, source.type.rank() - 1)];
  if (n != source_n)
    throw std::invalid_argument("index_reduce_(): Number of indices (" + std::to_string(n) +
                                ") should be equal to source.size(dim): (" + std::to_string(source_n) +
                                "), for dim: " + std::to_string(dim));
  check_in_range(b, index, 0, size, CheckKind::Index, "index_reduce(): index out of range in self");
  if (n == 0 || self.type.numel() == 0 || source.type.numel() == 0) return {b.reshape(self, out.dims)};
  Value idx = b.broadcast_in_dim(b.reshape(b.convert(index, DType::I64), {n}),
                                 source.type.dims, {dim});
  Value coords = coords_with(b, source.type.dims, dim, idx);
  Value acc = self;
  if (!include_self)
    acc = scatter_at(b, acc, coords, b.broadcast_to(identity(b, dt, r), source.type.dims), Combine::Replace);
  acc = scatter_at(b, acc, coords, source, how);
  if (r == "mean") {  // divide by the number of values each element got (itself included); floor for ints
    Value count = b.splat_int(self.type, include_self ? 1 : 0);
    count = scatter_at(b, count, coords, b.splat_int(source.type, 1), Combine::Add);
    Value zero = b.splat_int(self.type, 0);
    count = b.select(b.compare(count, zero, "EQ"), b.splat_int(self.type, 1), count);
    if (hlo::is_float(dt)) {
      DType ct = compute_type(dt);
      acc = b.convert(b.divide(b.convert(acc, ct), b.convert(count, ct)), dt);
    } else {
      Value q = b.divide(acc, count);
      Value neg = b.compare(b.binary("remainder", acc, count), zero, "LT");
      acc = b.select(neg, b.subtract(q, b.splat_int(q.type, 1)), q);
    }
  }
  return {b.reshape(acc, out.dims)};
}

TORCH_TPU_LOWERING("index_reduce", index_reduce_rule);

// put(self, Tensor index, Tensor source, bool accumulate=False): self viewed
// flat, source's values written (or added) at index (negative counts from the end).
Values put_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value self = b.convert(operand(c, v, 0), out.dtype);
  Value index = operand(c, v, 1);
  // The CPU's checks, in its order: one dtype for self and source, a long
  // index, as many source values as indices (IndexError).
  DType self_t = operand(c, v, 0).type.dtype, source_t = operand(c, v, 2).type.dtype;
  if (self_t != source_t)
    throw std::invalid_argument(std::string("put_(): self and source expected to have the same dtype, but got "
                                            "self.dtype = ") + torch_dtype_name(self_t) + " and source.dtype = " +
                                torch_dtype_name(source_t));
  if (index.type.dtype != DType::I64)
    throw std::invalid_argument(std::string("put_(): Expected a long tensor for index, but got ") +
                                torch_dtype_name(index.type.dtype));
  if (operand(c, v, 2).type.numel() != index.type.numel())
    throw std::out_of_range("put_(): Expected source and index to have the same number of elements, but got "
                            "source.numel() = " + std::to_string(operand(c, v, 2).type.numel()) +
                            ", index.numel() = " + std::to_string(index.type.numel()));
  Value source = b.convert(operand(c, v, 2), out.dtype);
  bool accumulate = c.arg(3).b;
  int64_t numel = self.type.numel(), n = index.type.numel();
  if (n == 0) return {self};
  check_in_range(b, index, -numel, numel, CheckKind::Index,
                 "put_(): index out of range for a tensor of " + std::to_string(numel) + " elements");
  if (numel == 0) return {self};
  Value idx = b.reshape(b.convert(index, DType::I64), {n});
  idx = b.select(b.compare(idx, b.splat_int(idx.type, 0), "LT"), b.add(idx, b.splat_int(idx.type, numel)), idx);
  Value flat = scatter_at(b, b.reshape(self, {numel}), b.reshape(idx, {n, 1}), b.reshape(source, {n}),
                          accumulate ? Combine::Add : Combine::Replace);
  return {b.reshape(flat, out.dims)};
}

TORCH_TPU_ACCEPTS_COMPLEX("put");
TORCH_TPU_LOWERING("put", put_rule);

}  // namespace
}  // namespace torch_tpu::ops
