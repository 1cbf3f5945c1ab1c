// Index maps known at compile time (upsample, pad, unfold): the source index
// of every output position along one dimension is computed in C++ from the
// static sizes, exactly as PyTorch's CPU kernel computes it, and baked into
// the program as a constant; the data moves with one gather per dimension
// (and one scatter-add per dimension for the backward).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "ops/lowering_helpers.h"

namespace torch_tpu::ops::static_index {

// A 1-D constant: i64 indices.
inline Value indices(Builder& b, const std::vector<int64_t>& idx) {
  TensorType t(DType::I64, {static_cast<int64_t>(idx.size())});
  std::string lit = "[";
  for (size_t i = 0; i < idx.size(); ++i) lit += (i ? ", " : "") + std::to_string(idx[i]);
  return b.emit1("constant", {}, "value = dense<" + lit + "]> : " + t.str(), t);
}

// A 1-D constant of `dtype` (f32 or f64); decimal with round-trip precision.
inline Value floats(Builder& b, DType dtype, const std::vector<double>& v) {
  TensorType t(dtype, {static_cast<int64_t>(v.size())});
  std::string lit = "[";
  char buf[40];
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::F64) std::snprintf(buf, sizeof(buf), "%.17e", v[i]);
    else std::snprintf(buf, sizeof(buf), "%.9e", static_cast<double>(static_cast<float>(v[i])));
    lit += (i ? ", " : "") + std::string(buf);
  }
  return b.emit1("constant", {}, "value = dense<" + lit + "]> : " + t.str(), t);
}

inline std::vector<int64_t> all_but(int64_t rank, int64_t dim) {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < rank; ++i)
    if (i != dim) r.push_back(i);
  return r;
}

// result[..., j, ...] = x[..., idx[j], ...] along `dim`.
inline Value take(Builder& b, const Value& x, int64_t dim, const std::vector<int64_t>& idx) {
  TensorType r = x.type;
  r.dims[dim] = static_cast<int64_t>(idx.size());
  if (r.numel() == 0 || x.type.numel() == 0) return b.splat_int(r, 0);
  std::vector<int64_t> sizes = x.type.dims;
  sizes[dim] = 1;
  return b.emit1("gather", {x, indices(b, idx)},
                 "dimension_numbers = #stablehlo.gather<offset_dims = " + hlo::int_list(all_but(x.type.rank(), dim)) +
                     ", collapsed_slice_dims = [" + std::to_string(dim) + "], start_index_map = [" +
                     std::to_string(dim) + "], index_vector_dim = 1>, slice_sizes = " + hlo::int_array(sizes) +
                     ", indices_are_sorted = false",
                 r);
}

// The adjoint of take: result (size `size` along dim) sums g[..., j, ...] into
// position idx[j].
inline Value take_add(Builder& b, const Value& g, int64_t dim, const std::vector<int64_t>& idx, int64_t size) {
  TensorType r = g.type;
  r.dims[dim] = size;
  Value zero = b.splat_int(r, 0);
  if (r.numel() == 0 || g.type.numel() == 0) return zero;
  TensorType elem(g.type.dtype, {});
  hlo::RegionBody body = [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; };
  return b.emit("scatter", {zero, indices(b, idx), g},
                "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = " +
                    hlo::int_list(all_but(g.type.rank(), dim)) + ", inserted_window_dims = [" + std::to_string(dim) +
                    "], scatter_dims_to_operand_dims = [" + std::to_string(dim) +
                    "], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false",
                {r}, {{{elem, elem}, body}})[0];
}

// A per-position weight along `dim`, broadcast over `like`.
inline Value weights_along(Builder& b, const std::vector<double>& w, int64_t dim, const Value& like) {
  Value c = floats(b, like.type.dtype == DType::F64 ? DType::F64 : DType::F32, w);
  return b.broadcast_in_dim(b.convert(c, like.type.dtype), like.type.dims, {dim});
}

}  // namespace torch_tpu::ops::static_index
