// gather / scatter along one dimension (torch.gather, Tensor.scatter_*,
// scatter_add, scatter_reduce). Both are lowered to StableHLO gather/scatter
// over full element coordinates: coordinate d of element i is i[d], except
// along `dim`, where it is index[i]. Indices are assumed in range: StableHLO
// clamps (gather) or drops (scatter) the others instead of raising.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

std::string iota_list(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i);
  return hlo::int_list(v);
}

// Raises a RuntimeError (at the next sync), as the CPU does, when an index
// lies outside [0, size).
void check_range(Builder& b, const Value& index, int64_t dim, int64_t size) {
  if (index.type.numel() == 0) return;
  Value x = b.convert(index, DType::I64);
  Value bad = b.binary("or", b.compare(x, b.splat_int(x.type, 0), "LT"), b.compare(x, b.splat_int(x.type, size), "GE"));
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x.type.rank(); ++d) all.push_back(d);
  hlo::RegionBody any = [](Builder& rb, const Values& a) { return Values{rb.binary("or", a[0], a[1])}; };
  Value flag = all.empty() ? bad : b.reduce({bad}, {b.constant_bool(false)}, all, any)[0];
  add_runtime_check(flag, CheckKind::Runtime,
                    "index out of bounds for dimension " + std::to_string(dim) + " with size " + std::to_string(size));
}

// [*index.dims, rank] i64 coordinates into a rank-`rank` operand.
Value coordinates(Builder& b, const Value& index, int64_t dim, int64_t rank) {
  std::vector<int64_t> one = index.type.dims;
  one.push_back(1);
  TensorType t(DType::I64, index.type.dims);
  Values parts;
  for (int64_t d = 0; d < rank; ++d) {
    Value c = d == dim ? b.convert(index, DType::I64) : b.iota(t, d);
    parts.push_back(b.reshape(c, one));
  }
  return b.concatenate(parts, static_cast<int64_t>(one.size()) - 1);
}

// gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False)
TORCH_TPU_ACCEPTS_COMPLEX("gather", "scatter.src", "scatter.value", "scatter.reduce", "scatter.value_reduce",
                          "scatter_add");

TORCH_TPU_LOWERING("gather", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value self = operand(c, v, 0);
  const Value& index = operand(c, v, 2);
  int64_t rank = self.type.rank();
  int64_t dim = wrap_dim(c.arg(1).i, rank);
  check_range(b, index, dim, rank == 0 ? 1 : self.type.dims[dim]);
  if (out.numel() == 0 || self.type.numel() == 0) return Values{b.splat_int(out, 0)};
  if (rank == 0) return Values{b.broadcast_to(self, out.dims)};  // index can only be 0
  Value coords = coordinates(b, index, dim, rank);
  std::vector<int64_t> ones(rank, 1);
  return Values{b.emit1("gather", {self, coords},
                        "dimension_numbers = #stablehlo.gather<collapsed_slice_dims = " + iota_list(rank) +
                            ", start_index_map = " + iota_list(rank) +
                            ", index_vector_dim = " + std::to_string(index.type.rank()) +
                            ">, slice_sizes = " + hlo::int_array(ones) + ", indices_are_sorted = false",
                        out)};
});

enum class Combine { Replace, Add, Multiply, Max, Min };

// The CPU's amax/amin return NaN when either side is NaN; XLA's max/min on
// the CPU do not always.
Value propagate_nan(Builder& b, const Value& x, const Value& y, const Value& r) {
  if (!hlo::is_float(x.type.dtype)) return r;
  return b.select(b.compare(x, x, "NE"), x, b.select(b.compare(y, y, "NE"), y, r));
}

Value combine(Builder& b, Combine how, const Value& old, const Value& update) {
  switch (how) {
    case Combine::Replace: return update;
    case Combine::Add:
      return old.type.dtype == DType::Pred ? b.binary("or", old, update) : b.add(old, update);
    case Combine::Multiply:
      return old.type.dtype == DType::Pred ? b.binary("and", old, update) : b.multiply(old, update);
    case Combine::Max: return propagate_nan(b, old, update, b.maximum(old, update));
    case Combine::Min: return propagate_nan(b, old, update, b.minimum(old, update));
  }
  return update;
}

// self with updates[i] combined into self[coords(i)] for every element i of
// `index` (updates has index's shape and self's dtype).
Value scatter_elements(Builder& b, const Value& self, int64_t dim, const Value& index, const Value& updates,
                       Combine how) {
  if (index.type.numel() == 0 || self.type.numel() == 0) return self;
  int64_t rank = self.type.rank();
  if (rank == 0) {  // a 0-d self: one element, index 0
    Value flat = scatter_elements(b, b.reshape(self, {1}), 0, b.reshape(index, {1}), b.reshape(updates, {1}), how);
    return b.reshape(flat, {});
  }
  if (index.type.rank() == 0)  // a 0-d index into a 1-d self: one element
    return scatter_elements(b, self, dim, b.reshape(index, {1}), b.reshape(updates, {1}), how);
  Value coords = coordinates(b, index, dim, rank);
  TensorType elem(self.type.dtype, {});
  hlo::RegionBody body = [how](Builder& rb, const Values& args) { return Values{combine(rb, how, args[0], args[1])}; };
  return b.emit("scatter", {self, coords, updates},
                "scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = " + iota_list(rank) +
                    ", scatter_dims_to_operand_dims = " + iota_list(rank) +
                    ", index_vector_dim = " + std::to_string(index.type.rank()) +
                    ">, indices_are_sorted = false, unique_indices = false",
                {self.type}, {{{elem, elem}, body}})[0];
}

// src cut to index's shape (src may be larger in every dimension).
// PyTorch reads a 0-d index or src as 1-d of one element (ensure_nonempty_dim).
Value src_for(Builder& b, const Value& src, const Value& index) {
  if (src.type.dims == index.type.dims) return src;
  if (src.type.rank() == 0) return b.reshape(src, index.type.dims);  // 0-d src: 0-d index
  std::vector<int64_t> limit = index.type.rank() == 0 ? std::vector<int64_t>{1} : index.type.dims;
  std::vector<int64_t> start(src.type.rank(), 0), strides(src.type.rank(), 1);
  return b.slice(src, start, limit, strides);
}

Combine parse_reduce(const std::string& r) {
  if (r == "add" || r == "sum" || r == "mean") return Combine::Add;
  if (r == "multiply" || r == "prod") return Combine::Multiply;
  if (r == "amax") return Combine::Max;
  if (r == "amin") return Combine::Min;
  throw std::invalid_argument("scatter: unsupported reduce '" + r + "'");
}

// scatter.src / scatter.value and their `reduce=` forms: args (self, dim,
// index, src|value[, reduce]).
Values scatter_rule(Builder& b, const OpCall& c, const Values& v, bool reduce) {
  const Value& self = operand(c, v, 0);
  const Value& index = operand(c, v, 2);
  int64_t dim = wrap_dim(c.arg(1).i, self.type.rank());
  Value src = b.convert(operand(c, v, 3), self.type.dtype);
  src = src.type.rank() == 0 ? b.broadcast_to(src, index.type.dims) : src_for(b, src, index);
  Combine how = reduce ? parse_reduce(c.arg(4).s) : Combine::Replace;
  check_range(b, index, dim, self.type.rank() == 0 ? 1 : self.type.dims[dim]);
  return Values{scatter_elements(b, self, dim, index, src, how)};
}

TORCH_TPU_LOWERING("scatter.src", [](Builder& b, const OpCall& c, const Values& v) {
  return scatter_rule(b, c, v, false);
});
TORCH_TPU_LOWERING("scatter.value", [](Builder& b, const OpCall& c, const Values& v) {
  return scatter_rule(b, c, v, false);
});
TORCH_TPU_LOWERING("scatter.reduce", [](Builder& b, const OpCall& c, const Values& v) {
  return scatter_rule(b, c, v, true);
});
TORCH_TPU_LOWERING("scatter.value_reduce", [](Builder& b, const OpCall& c, const Values& v) {
  return scatter_rule(b, c, v, true);
});

// scatter_add(Tensor self, int dim, Tensor index, Tensor src)
TORCH_TPU_LOWERING("scatter_add", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& self = operand(c, v, 0);
  const Value& index = operand(c, v, 2);
  int64_t dim = wrap_dim(c.arg(1).i, self.type.rank());
  Value src = src_for(b, b.convert(operand(c, v, 3), self.type.dtype), index);
  check_range(b, index, dim, self.type.rank() == 0 ? 1 : self.type.dims[dim]);
  return Values{scatter_elements(b, self, dim, index, src, Combine::Add)};
});

// The identity of a reduction in `dtype`, written where include_self=False.
Value reduce_identity(Builder& b, DType dtype, const std::string& r) {
  if (r == "prod") return b.constant_int(dtype, 1);
  if (r == "sum" || r == "mean") return b.constant_int(dtype, 0);
  bool max = r == "amax";
  if (hlo::is_float(dtype)) return b.constant_float(dtype, max ? -INFINITY : INFINITY);
  if (dtype == DType::Pred) return b.constant_bool(!max);
  int bits = hlo::dtype_bits(dtype);
  if (hlo::is_unsigned(dtype)) {
    return max ? b.constant_int(dtype, 0)
               : b.constant_int(dtype, bits == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << bits) - 1));
  }
  int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
  return b.constant_int(dtype, max ? -hi - 1 : hi);
}

// a / b rounded down (b > 0), like the CPU's integer mean.
Value floor_divide_positive(Builder& b, const Value& a, const Value& d) {
  Value q = b.divide(a, d);
  Value r = b.binary("remainder", a, d);
  Value neg = b.compare(r, b.splat_int(r.type, 0), "LT");
  return b.select(neg, b.subtract(q, b.splat_int(q.type, 1)), q);
}

// scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True)
TORCH_TPU_LOWERING("scatter_reduce.two", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& self = operand(c, v, 0);
  const Value& index = operand(c, v, 2);
  const std::string& r = c.arg(4).s;
  bool include_self = c.arg(5).b;
  DType dt = self.type.dtype;
  int64_t dim = wrap_dim(c.arg(1).i, self.type.rank());
  Value src = src_for(b, b.convert(operand(c, v, 3), dt), index);
  Combine how = parse_reduce(r);
  check_range(b, index, dim, self.type.rank() == 0 ? 1 : self.type.dims[dim]);
  Value start = self;
  if (!include_self) {
    Value id = b.broadcast_to(reduce_identity(b, dt, r), index.type.dims);
    start = scatter_elements(b, self, dim, index, id, Combine::Replace);
  }
  Value acc = scatter_elements(b, start, dim, index, src, how);
  if (r != "mean") return Values{acc};
  // Divide by how many values each element received (itself included); untouched elements keep self.
  Value count = b.splat_int(self.type, include_self ? 1 : 0);
  count = scatter_elements(b, count, dim, index, b.splat_int(src.type, 1), Combine::Add);
  Value zero = b.splat_int(self.type, 0);
  count = b.select(b.compare(count, zero, "EQ"), b.splat_int(self.type, 1), count);
  if (hlo::is_float(dt)) {
    DType ct = compute_type(dt);
    return Values{b.convert(b.divide(b.convert(acc, ct), b.convert(count, ct)), dt)};
  }
  return Values{floor_divide_positive(b, acc, count)};
});

}  // namespace
}  // namespace torch_tpu::ops
