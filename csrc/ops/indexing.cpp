// Indexing with integer index tensors: index_select, index_add, advanced
// indexing (x[i, :, j]) and its write form index_put (x[i, j] = v), plus the
// boolean-mask write x[mask] = v, whose result shape does not depend on the
// mask's values. Reading x[mask] has a data-dependent shape and is not lowered.
// Indices are assumed in range (StableHLO clamps or drops the others).
#include <stdexcept>
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/torch_dtype_name.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

std::vector<int64_t> all_but(int64_t rank, const std::vector<int64_t>& skip) {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < rank; ++i) {
    bool s = false;
    for (int64_t k : skip) s |= k == i;
    if (!s) r.push_back(i);
  }
  return r;
}

// Raises (at the next sync) when an element of the integer index `i` lies
// outside [lo, hi): the CPU checks every index before it reads.
void check_range(Builder& b, const Value& i, int64_t lo, int64_t hi, CheckKind kind, const std::string& msg) {
  if (i.type.numel() == 0) return;
  Value x = b.convert(i, DType::I64);
  Value bad = b.binary("or", b.compare(x, b.splat_int(x.type, lo), "LT"), b.compare(x, b.splat_int(x.type, hi), "GE"));
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x.type.rank(); ++d) all.push_back(d);
  hlo::RegionBody any = [](Builder& rb, const Values& a) { return Values{rb.binary("or", a[0], a[1])}; };
  Value flag = all.empty() ? bad : b.reduce({bad}, {b.constant_bool(false)}, all, any)[0];
  add_runtime_check(flag, kind, msg);
}

std::string shape_list(const std::vector<int64_t>& dims) {
  std::string r = "[";
  for (size_t i = 0; i < dims.size(); ++i) r += (i ? ", " : "") + std::to_string(dims[i]);
  return r + "]";
}

std::string bounds_message(int64_t dim, int64_t size) {
  return "index out of bounds for dimension " + std::to_string(dim) + " with size " + std::to_string(size);
}

// Gathers slices of `x` at `indices` (index vector in dimension
// `ivd`): indexed dims `dims` collapse, the rest land at `offset_dims`.
Value gather_slices(Builder& b, const Value& x, const Value& indices, int64_t ivd, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& offset_dims, const TensorType& result) {
  std::vector<int64_t> sizes = x.type.dims;
  for (int64_t d : dims) sizes[d] = 1;
  return b.emit1("gather", {x, indices},
                 "dimension_numbers = #stablehlo.gather<offset_dims = " + hlo::int_list(offset_dims) +
                     ", collapsed_slice_dims = " + hlo::int_list(dims) + ", start_index_map = " + hlo::int_list(dims) +
                     ", index_vector_dim = " + std::to_string(ivd) + ">, slice_sizes = " + hlo::int_array(sizes) +
                     ", indices_are_sorted = false",
                 result);
}

// The scatter counterpart of gather_slices: `updates` holds one window per
// index vector, its window dims at `window_dims`.
Value scatter_slices(Builder& b, const Value& x, const Value& indices, int64_t ivd, const std::vector<int64_t>& dims,
                     const std::vector<int64_t>& window_dims, const Value& updates, bool accumulate) {
  TensorType elem(x.type.dtype, {});
  hlo::RegionBody body = [accumulate](Builder& rb, const Values& a) {
    if (!accumulate) return Values{a[1]};
    return Values{a[0].type.dtype == DType::Pred ? rb.binary("or", a[0], a[1]) : rb.add(a[0], a[1])};
  };
  return b.emit("scatter", {x, indices, updates},
                "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = " + hlo::int_list(window_dims) +
                    ", inserted_window_dims = " + hlo::int_list(dims) +
                    ", scatter_dims_to_operand_dims = " + hlo::int_list(dims) +
                    ", index_vector_dim = " + std::to_string(ivd) +
                    ">, indices_are_sorted = false, unique_indices = false",
                {x.type}, {{{elem, elem}, body}})[0];
}

// index_select(Tensor self, int dim, Tensor index)
TORCH_TPU_ACCEPTS_COMPLEX("index_select", "index_fill.int_Scalar", "index_fill.int_Tensor", "take", "index_add",
                          "index.Tensor", "index_put", "_index_put_impl");

TORCH_TPU_LOWERING("index_select", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& self = operand(c, v, 0);
  const Value& index = operand(c, v, 2);
  if (index.type.dtype != DType::I64 && index.type.dtype != DType::I32)
    throw std::invalid_argument("index_select(): Expected dtype int32 or int64 for index");
  int64_t rank = self.type.rank(), dim = wrap_dim(c.arg(1).i, rank);
  if (index.type.rank() > 1) throw std::out_of_range("index_select(): Index is supposed to be a vector");
  if (rank == 0 && index.type.numel() != 1)  // the CPU's check (PyTorch's meta kernel skips it)
    throw std::invalid_argument("index_select(): Index to scalar can have only 1 value, got " +
                                std::to_string(index.type.numel()) + " value(s)");
  check_range(b, index, 0, rank == 0 ? 1 : self.type.dims[dim], CheckKind::Index, "index out of range in self");
  if (out.numel() == 0 || self.type.numel() == 0) return Values{b.splat_int(out, 0)};
  if (rank == 0) return Values{b.reshape(self, out.dims)};
  Value idx = b.reshape(index, {index.type.numel()});
  TensorType r(self.type.dtype, self.type.dims);
  r.dims[dim] = idx.type.dims[0];
  return Values{b.reshape(gather_slices(b, self, idx, 1, {dim}, all_but(rank, {dim}), r), out.dims)};
});

// index_fill(Tensor self, int dim, Tensor index, Scalar|Tensor value): the
// positions along `dim` named by index (negatives wrap) take the value.
Values index_fill(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& self = operand(c, v, 0);
  const Value& index = operand(c, v, 2);
  if (index.type.dtype != DType::I64) throw std::out_of_range("index_fill_(): Expected dtype int64 for index.");
  int64_t rank = self.type.rank(), dim = wrap_dim(c.arg(1).i, rank);
  int64_t size = rank == 0 ? 1 : self.type.dims[dim], n = index.type.numel();
  check_range(b, index, -size, size, CheckKind::Index, "index out of range in self");
  if (out.numel() == 0 || n == 0) return Values{self};
  Value idx = b.reshape(b.convert(index, DType::I64), {n});
  idx = b.select(b.compare(idx, b.splat_int(idx.type, 0), "LT"), b.add(idx, b.splat_int(idx.type, size)), idx);
  TensorType grid(DType::I64, {n, size});
  Value eq = b.compare(b.broadcast_in_dim(idx, grid.dims, {0}), b.iota(grid, 1), "EQ");
  hlo::RegionBody any = [](Builder& rb, const Values& a) { return Values{rb.binary("or", a[0], a[1])}; };
  Value hit = b.reduce({eq}, {b.constant_bool(false)}, {0}, any)[0];
  Value mask = rank == 0 ? b.reshape(hit, {}) : b.broadcast_in_dim(hit, out.dims, {dim});
  Value fill = b.broadcast_to(b.convert(operand(c, v, 3), out.dtype), out.dims);
  return Values{b.select(mask, fill, self)};
}
TORCH_TPU_LOWERING("index_fill.int_Scalar", index_fill);
TORCH_TPU_LOWERING("index_fill.int_Tensor", index_fill);

// take(Tensor self, Tensor index): self flattened, read at index (negatives wrap).
TORCH_TPU_LOWERING("take", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& self = operand(c, v, 0);
  const Value& index = operand(c, v, 1);
  int64_t n = self.type.numel(), m = index.type.numel();
  check_range(b, index, -n, n, CheckKind::Index, "take(): index out of range");
  if (m == 0 || n == 0) return Values{b.splat_int(out, 0)};
  Value idx = b.reshape(b.convert(index, DType::I64), {m});
  idx = b.select(b.compare(idx, b.splat_int(idx.type, 0), "LT"), b.add(idx, b.splat_int(idx.type, n)), idx);
  TensorType r(self.type.dtype, {m});
  return Values{b.reshape(gather_slices(b, b.reshape(self, {n}), idx, 1, {0}, {}, r), out.dims)};
});

// index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1):
// accumulated in the CPU's compute type, so each element rounds once.
TORCH_TPU_LOWERING("index_add", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& self = operand(c, v, 0);
  const Value& index = operand(c, v, 2);
  DType dt = self.type.dtype, ct = compute_type(dt);
  // The CPU's checks, in its order: the index dtype, then one dtype for self and source.
  if (index.type.dtype != DType::I64 && index.type.dtype != DType::I32)
    throw std::invalid_argument(std::string("index_add_(): Expected dtype int32/int64 for index but got: ") +
                                torch_dtype_name(index.type.dtype));
  if (operand(c, v, 3).type.dtype != dt)
    throw std::invalid_argument(std::string("index_add_(): self (") + torch_dtype_name(dt) + ") and source (" +
                                torch_dtype_name(operand(c, v, 3).type.dtype) + ") must have the same scalar type");
  int64_t rank = std::max<int64_t>(self.type.rank(), 1), dim = wrap_dim(c.arg(1).i, self.type.rank());
  int64_t size = self.type.rank() == 0 ? 1 : self.type.dims[dim];
  check_range(b, index, 0, size, CheckKind::Runtime, bounds_message(dim, size));
  if (index.type.numel() == 0 || self.type.numel() == 0) return Values{self};
  Value x = b.convert(self.type.rank() == 0 ? b.reshape(self, {1}) : self, ct);
  Value idx = b.reshape(index, {index.type.numel()});
  std::vector<int64_t> udims = x.type.dims;
  udims[dim] = idx.type.dims[0];
  Value src = b.reshape(b.convert(operand(c, v, 3), ct), udims);
  // source * alpha (a bool alpha=False adds nothing: and, for bool)
  Value alpha = to_type(b, operand(c, v, 4), src.type);
  src = src.type.dtype == DType::Pred ? b.binary("and", src, alpha) : b.multiply(src, alpha);
  Value r = scatter_slices(b, x, idx, 1, {dim}, all_but(rank, {dim}), src, true);
  return Values{b.convert(b.reshape(r, self.type.dims), dt)};
});

// Advanced indexing geometry for self[indices] with integer index tensors.
struct Advanced {
  std::vector<int64_t> dims;         // self dims indexed by a tensor (ascending)
  std::vector<int64_t> batch;        // broadcast shape of the index tensors
  Value coords;                      // [*batch, dims.size()] i64, negatives wrapped
  std::vector<int64_t> window_dims;  // where the other self dims land in the result
  std::vector<int64_t> result_dims;  // the shape of self[indices]
};

std::vector<int64_t> broadcast_shapes(const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> r(rank, 1);
  for (const auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& d = r[rank - s.size() + i];
      if (d == 1) d = s[i];
      else if (s[i] != 1 && s[i] != d) throw std::invalid_argument("index: shape mismatch: indices cannot be broadcast together");
    }
  return r;
}

bool is_mask(const Value& i) { return i.type.dtype == DType::Pred || i.type.dtype == DType::U8; }

Advanced advanced(Builder& b, const Value& self, const std::vector<int>& index_ops, const Values& v) {
  Advanced a;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t k = 0; k < index_ops.size(); ++k) {
    if (index_ops[k] < 0) continue;
    if (is_mask(v.at(index_ops[k])))
      throw std::invalid_argument("indexing with a boolean mask has a data-dependent shape");
    a.dims.push_back(static_cast<int64_t>(k));
    shapes.push_back(v.at(index_ops[k]).type.dims);
  }
  if (a.dims.empty()) throw std::invalid_argument("index: no index tensor");
  a.batch = broadcast_shapes(shapes);
  std::vector<int64_t> one = a.batch;
  one.push_back(1);
  Values parts;
  for (int64_t d : a.dims) {
    int64_t n = self.type.dims[d];
    Value i = b.broadcast_to(b.convert(v.at(index_ops[d]), DType::I64), a.batch);
    Value size = b.splat_int(i.type, n);
    Value wrapped = b.select(b.compare(i, b.splat_int(i.type, 0), "LT"), b.add(i, size), i);
    parts.push_back(b.reshape(wrapped, one));
  }
  a.coords = parts.size() == 1 ? parts[0] : b.concatenate(parts, static_cast<int64_t>(a.batch.size()));
  // Adjacent indexed dims keep their place in the result; separated ones go first.
  bool adjacent = a.dims.back() - a.dims.front() + 1 == static_cast<int64_t>(a.dims.size());
  int64_t at = adjacent ? a.dims.front() : 0;
  std::vector<int64_t> rest = all_but(self.type.rank(), a.dims);
  int64_t nb = static_cast<int64_t>(a.batch.size());
  for (size_t k = 0; k < rest.size(); ++k) {
    int64_t pos = static_cast<int64_t>(k) < at ? static_cast<int64_t>(k) : static_cast<int64_t>(k) + nb;
    a.window_dims.push_back(pos);
  }
  a.result_dims.assign(rest.size() + nb, 0);
  for (size_t k = 0; k < rest.size(); ++k) a.result_dims[a.window_dims[k]] = self.type.dims[rest[k]];
  for (int64_t k = 0; k < nb; ++k) a.result_dims[at + k] = a.batch[k];
  // The CPU checks indices as it visits the result's elements: none when it is empty.
  if (TensorType(self.type.dtype, a.result_dims).numel() > 0)
    for (size_t k = 0; k < a.dims.size(); ++k) {
      int64_t d = a.dims[k], n = self.type.dims[d];
      check_range(b, v.at(index_ops[d]), -n, n, CheckKind::Index, bounds_message(static_cast<int64_t>(k), n));
    }
  return a;
}

// index.Tensor(Tensor self, Tensor?[] indices)
TORCH_TPU_LOWERING("index.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& self = operand(c, v, 0);
  for (int i : c.arg(1).operands)
    if (i >= 0 && is_mask(v.at(i)))
      throw std::invalid_argument("indexing with a boolean mask has a data-dependent shape");
  Advanced a = advanced(b, self, c.arg(1).operands, v);  // (records the range checks)
  if (a.result_dims != out.dims) throw std::invalid_argument("index: unexpected result shape");
  if (out.numel() == 0 || self.type.numel() == 0) return Values{b.splat_int(out, 0)};
  return Values{gather_slices(b, self, a.coords, static_cast<int64_t>(a.batch.size()), a.dims, a.window_dims, out)};
});

// Inclusive prefix count of a flat i64 vector (log-step scan).
Value prefix_sum(Builder& b, Value x) {
  int64_t n = x.type.dims[0];
  Value zero = b.constant_int(DType::I64, 0);
  for (int64_t s = 1; s < n; s *= 2) {
    Value shifted = b.pad(b.slice(x, {0}, {n - s}, {1}), zero, {s}, {0}, {0});
    x = b.add(x, shifted);
  }
  return x;
}

// self[mask] = values, the mask covering dims [p, p + mask rank): values
// broadcast against [*before, nnz, *after]; the k-th true element of the mask
// takes values' k-th entry along that dim.
Value put_mask(Builder& b, const Value& self, int64_t p, const Value& mask, const Value& values, bool accumulate) {
  int64_t rank = self.type.rank(), k = mask.type.rank();
  std::vector<int64_t> mask_dims;
  for (int64_t d = p; d < p + k; ++d) mask_dims.push_back(d);
  Value m = b.convert(mask, DType::Pred);
  // values left-padded to [*before, n, *after], broadcast in before/after.
  int64_t g_rank = rank - k + 1;
  if (values.type.rank() > g_rank) throw std::invalid_argument("index_put: values have too many dimensions");
  std::vector<int64_t> vdims(g_rank - values.type.rank(), 1);
  vdims.insert(vdims.end(), values.type.dims.begin(), values.type.dims.end());
  int64_t n = vdims[p];
  std::vector<int64_t> full;
  for (int64_t d = 0; d < p; ++d) full.push_back(self.type.dims[d]);
  full.push_back(n);
  for (int64_t d = p + k; d < rank; ++d) full.push_back(self.type.dims[d]);
  // The CPU's message, with the mask's true count (known only on the device) as "n".
  std::string result = "[";
  for (size_t d = 0; d < full.size(); ++d)
    result += (d ? ", " : "") + (static_cast<int64_t>(d) == p ? std::string("n") : std::to_string(full[d]));
  std::string mismatch = "shape mismatch: value tensor of shape " + shape_list(values.type.dims) +
                         " cannot be broadcast to indexing result of shape " + result +
                         "] (n: the mask's count of true elements)";
  for (int64_t d = 0; d < g_rank; ++d)
    if (d != p && vdims[d] != 1 && vdims[d] != full[d]) throw std::invalid_argument(mismatch);
  if (n != 1) {
    // values give one entry per true element: the count must be n (an empty
    // values tensor goes with a mask that selects nothing).
    Value flat = b.reshape(b.convert(m, DType::I64), {mask.type.numel()});
    hlo::RegionBody sum = [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; };
    Value count = mask.type.numel() == 0 ? b.constant_int(DType::I64, 0)
                                         : b.reduce({flat}, {b.constant_int(DType::I64, 0)}, {0}, sum)[0];
    add_runtime_check(b.compare(count, b.constant_int(DType::I64, n), "NE"), CheckKind::Runtime, mismatch);
  }
  if (n == 0) return self;
  Value vals = b.reshape(b.convert(values, self.type.dtype), vdims);
  std::vector<int64_t> ident;
  for (int64_t d = 0; d < g_rank; ++d) ident.push_back(d);
  vals = b.broadcast_in_dim(vals, full, ident);
  Value spread;
  if (n == 1) {
    std::vector<int64_t> squeezed = full;
    squeezed.erase(squeezed.begin() + p);
    std::vector<int64_t> m2;
    for (int64_t d = 0; d < g_rank; ++d) if (d != p) m2.push_back(d < p ? d : d + k - 1);
    spread = b.broadcast_in_dim(b.reshape(vals, squeezed), self.type.dims, m2);
  } else {
    Value flat = b.reshape(b.convert(m, DType::I64), {mask.type.numel()});
    Value pos = b.subtract(prefix_sum(b, flat), b.splat_int(flat.type, 1));
    pos = b.maximum(pos, b.splat_int(pos.type, 0));
    pos = b.reshape(pos, mask.type.dims);
    spread = gather_slices(b, vals, pos, k, {p}, all_but(rank, mask_dims), self.type);
  }
  Value where = b.broadcast_in_dim(m, self.type.dims, mask_dims);
  if (!accumulate) return b.select(where, spread, self);
  Value sum = self.type.dtype == DType::Pred ? b.binary("or", self, spread) : b.add(self, spread);  // bool += is or
  return b.select(where, sum, self);
}

// index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False)
// (also _index_put_impl, whose extra `unsafe` flag changes nothing here).
Values index_put_rule(Builder& b, const OpCall& c, const Values& v) {
  const Value& self = operand(c, v, 0);
  const auto& index_ops = c.arg(1).operands;
  bool accumulate = c.arg(3).b;
  int masks = 0, tensors = 0, mask_at = -1;
  for (size_t k = 0; k < index_ops.size(); ++k) {
    if (index_ops[k] < 0) continue;
    ++tensors;
    if (is_mask(v.at(index_ops[k]))) ++masks, mask_at = static_cast<int>(k);
  }
  const Value& values = operand(c, v, 2);
  if (values.type.dtype != self.type.dtype)  // the CPU checks this; the meta kernel does not
    throw std::invalid_argument(std::string("Index put requires the source and destination dtypes match, got ") +
                                hlo::dtype_name(self.type.dtype) + " for the destination and " +
                                hlo::dtype_name(values.type.dtype) + " for the source.");
  if (masks > 0) {
    if (masks != 1 || tensors != 1)
      throw std::invalid_argument("index_put: a boolean mask mixed with other index tensors is not supported");
    const Value& mask = v.at(index_ops[mask_at]);
    if (self.type.numel() == 0) return Values{self};
    return Values{put_mask(b, self, mask_at, mask, values, accumulate)};
  }
  Advanced a = advanced(b, self, index_ops, v);
  if (self.type.numel() == 0 || TensorType(self.type.dtype, a.result_dims).numel() == 0) return Values{self};
  Value updates = b.broadcast_to(b.convert(values, self.type.dtype), a.result_dims);
  return Values{scatter_slices(b, self, a.coords, static_cast<int64_t>(a.batch.size()), a.dims, a.window_dims,
                               updates, accumulate)};
}

TORCH_TPU_LOWERING("index_put", index_put_rule);
TORCH_TPU_LOWERING("_index_put_impl", index_put_rule);

}  // namespace
}  // namespace torch_tpu::ops
