#include "ops/view_lowering.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace torch_tpu::ops {

using hlo::Builder;
using hlo::DType;
using hlo::TensorType;
using hlo::Value;

namespace {

int storage_bits(DType t) { return t == DType::Pred ? 8 : hlo::dtype_bits(t); }

// XLA has no bitcast to or from complex types: a 1-D complex array is
// reinterpreted through its (real, imag) component pairs, which is its memory
// layout.
Value split_complex(Builder& b, const Value& flat) {
  int64_t n = flat.type.numel();
  Value re = b.reshape(b.real(flat), {n, 1}), im = b.reshape(b.imag(flat), {n, 1});
  return b.reshape(b.concatenate({re, im}, 1), {2 * n});
}

Value join_complex(Builder& b, const Value& parts) {
  int64_t m = parts.type.numel() / 2;
  Value pairs = b.reshape(m * 2 == parts.type.numel() ? parts : b.slice(parts, {0}, {2 * m}, {1}), {m, 2});
  Value re = b.reshape(b.slice(pairs, {0, 0}, {m, 1}, {1, 1}), {m});
  Value im = b.reshape(b.slice(pairs, {0, 1}, {m, 2}, {1, 1}), {m});
  return b.complex(re, im);
}

// The base as a 1-D array of `dtype` elements (reinterpreting its bytes).
Value flat_as(Builder& b, const Value& base, DType dtype) {
  Value flat = b.reshape(base, {base.type.numel()});
  DType from = flat.type.dtype;
  if (from == dtype) return flat;
  if (hlo::is_complex(from)) return flat_as(b, split_complex(b, flat), dtype);
  if (hlo::is_complex(dtype)) return join_complex(b, flat_as(b, flat, hlo::complex_component(dtype)));
  if (from == DType::Pred) return flat_as(b, b.convert(flat, DType::U8), dtype);
  if (dtype == DType::Pred) return b.convert(flat_as(b, flat, DType::U8), DType::Pred);
  int fb = storage_bits(from), tb = storage_bits(dtype);
  int64_t n = flat.type.numel();
  if (fb == tb) return b.bitcast_convert(flat, TensorType(dtype, {n}));
  if (fb > tb) {
    int64_t r = fb / tb;
    return b.reshape(b.bitcast_convert(flat, TensorType(dtype, {n, r})), {n * r});
  }
  int64_t r = tb / fb, m = n / r;
  Value whole = m * r == n ? flat : b.slice(flat, {0}, {m * r}, {1});
  return b.bitcast_convert(b.reshape(whole, {m, r}), TensorType(dtype, {m}));
}

// Inverse of flat_as: `flat` (1-D of the view dtype) back into `base`'s type.
// Bytes of the base past the last whole element of `flat` are kept from `base`.
Value unflat_to(Builder& b, const Value& flat, const Value& base) {
  DType to = base.type.dtype, from = flat.type.dtype;
  int64_t n = base.type.numel();
  if (from == to) return b.reshape(flat, base.type.dims);
  if (hlo::is_complex(to)) {
    Value parts = unflat_to(b, flat, split_complex(b, b.reshape(base, {n})));
    return b.reshape(join_complex(b, parts), base.type.dims);
  }
  if (hlo::is_complex(from)) return unflat_to(b, split_complex(b, flat), base);
  if (to == DType::Pred) return b.convert(unflat_to(b, flat, b.convert(base, DType::U8)), DType::Pred);
  if (from == DType::Pred) return unflat_to(b, b.convert(flat, DType::U8), base);
  int fb = storage_bits(from), tb = storage_bits(to);
  if (fb == tb) return b.reshape(b.bitcast_convert(flat, TensorType(to, {n})), base.type.dims);
  if (fb < tb) {
    int64_t r = tb / fb;
    Value w = b.bitcast_convert(b.reshape(flat, {n, r}), TensorType(to, {n}));
    return b.reshape(w, base.type.dims);
  }
  int64_t r = fb / tb, m = flat.type.numel();
  Value narrow = b.reshape(b.bitcast_convert(flat, TensorType(to, {m, r})), {m * r});
  if (m * r != n) {  // keep the tail bytes that no whole wide element covers
    Value old = b.reshape(base, {n});
    narrow = b.concatenate({narrow, b.slice(old, {m * r}, {n}, {1})}, 0);
  }
  return b.reshape(narrow, base.type.dims);
}

struct StridedPlan {
  std::vector<int64_t> kept;       // view dims that address memory, in view order
  std::vector<int64_t> order;      // kept dims sorted by stride, largest first
  std::vector<int64_t> container;  // window shape whose row-major strides are the view's
  int64_t window = 0;              // elements in the window
  int64_t span = 0;                // elements from the offset to the last one addressed
};

// Returns false when the strides are not nested multiples (overlap, or
// strides that do not divide each other): those views need a gather.
bool plan_strided(const ViewGeometry& v, StridedPlan& p) {
  for (size_t d = 0; d < v.sizes.size(); ++d)
    if (v.sizes[d] != 1 && v.strides[d] != 0) p.kept.push_back(static_cast<int64_t>(d));
  p.order = p.kept;
  std::stable_sort(p.order.begin(), p.order.end(),
                   [&](int64_t a, int64_t b) { return v.strides[a] > v.strides[b]; });
  p.span = 1;
  for (int64_t d : p.order) p.span += (v.sizes[d] - 1) * v.strides[d];
  if (p.order.empty()) {
    p.container = {1};
    p.window = 1;
    return true;
  }
  for (size_t i = 0; i < p.order.size(); ++i) {
    int64_t s = v.strides[p.order[i]];
    if (s < 0) return false;
    if (i + 1 < p.order.size()) {
      int64_t next = v.strides[p.order[i + 1]];
      if (s % next != 0 || v.sizes[p.order[i + 1]] * next > s) return false;
    }
  }
  p.container.push_back(v.sizes[p.order[0]]);
  for (size_t i = 1; i < p.order.size(); ++i)
    p.container.push_back(v.strides[p.order[i - 1]] / v.strides[p.order[i]]);
  p.container.push_back(v.strides[p.order.back()]);
  p.window = v.sizes[p.order[0]] * v.strides[p.order[0]];
  return true;
}

int64_t numel_of(const std::vector<int64_t>& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<int64_t>());
}

// i64 element indices of every view element: offset + sum_d iota_d * stride_d.
Value element_indices(Builder& b, const ViewGeometry& v, const Value& offset) {
  TensorType t(DType::I64, v.sizes);
  Value idx = b.broadcast_in_dim(offset, v.sizes, {});
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    if (v.sizes[d] == 1 || v.strides[d] == 0) continue;
    Value term = b.multiply(b.iota(t, static_cast<int64_t>(d)), b.splat_int(t, v.strides[d]));
    idx = b.add(idx, term);
  }
  return idx;
}

// The flat base padded so a window of `window` elements fits at any valid offset.
Value padded(Builder& b, const Value& flat, const StridedPlan& p) {
  int64_t extra = p.window - p.span;
  if (extra <= 0) return flat;
  return b.pad(flat, b.constant_int(flat.type.dtype, 0), {0}, {extra}, {0});
}

}  // namespace

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * std::max<int64_t>(sizes[i + 1], 1);
  return s;
}

ViewAccess classify_view(const TensorType& base, const ViewGeometry& v) {
  int64_t n = numel_of(v.sizes);
  if (v.dtype == base.dtype && n == base.numel()) {
    // Row-major strides, innermost first, without a vector: every eager call classifies its tensors.
    bool dense = true;
    int64_t expect = 1;
    for (size_t d = v.sizes.size(); d-- > 0;) {
      dense &= v.sizes[d] == 1 || v.strides[d] == expect;
      expect *= std::max<int64_t>(v.sizes[d], 1);
    }
    if (dense) return ViewAccess::Whole;
  }
  if (n == 0) return ViewAccess::Strided;
  StridedPlan p;
  return plan_strided(v, p) ? ViewAccess::Strided : ViewAccess::Gather;
}

Value read_view(Builder& b, const Value& base, const ViewGeometry& v, const Value& offset) {
  TensorType out(v.dtype, v.sizes);
  ViewAccess access = classify_view(base.type, v);
  if (access == ViewAccess::Whole) return b.reshape(base, v.sizes);
  if (out.numel() == 0) return b.splat_int(out, 0);
  Value flat = flat_as(b, base, v.dtype);
  if (access == ViewAccess::Gather) return b.gather_elements_1d(flat, element_indices(b, v, offset));

  StridedPlan p;
  plan_strided(v, p);
  Value win = b.dynamic_slice(padded(b, flat, p), {offset}, {p.window});
  Value box = b.reshape(win, p.container);
  std::vector<int64_t> zeros(p.container.size(), 0), ones(p.container.size(), 1), limit;
  for (int64_t d : p.order) limit.push_back(v.sizes[d]);
  limit.push_back(1);
  Value sorted = b.reshape(b.slice(box, zeros, limit, ones), std::vector<int64_t>(limit.begin(), limit.end() - 1));
  // Back from stride order to view order, then insert size-1 and broadcast dims.
  std::vector<int64_t> perm;
  for (int64_t d : p.kept)
    perm.push_back(std::find(p.order.begin(), p.order.end(), d) - p.order.begin());
  Value in_view_order = b.transpose(sorted, perm);
  return b.broadcast_in_dim(in_view_order, v.sizes, p.kept);
}

Value write_view(Builder& b, const Value& base, const ViewGeometry& view, const Value& offset,
                 const Value& written) {
  if (written.type != TensorType(view.dtype, view.sizes))
    throw std::invalid_argument("write_view: value " + written.type.str() + " does not match the view");
  // A broadcast (stride 0) dim writes each element many times: the last
  // write stays, as in the CPU's loops. (The ops the CPU refuses such a
  // target for check it before they get here: fill_, zero_ and index_put_
  // write it.)
  ViewGeometry v = view;
  Value value = written;
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    if (v.sizes[d] <= 1 || v.strides[d] != 0) continue;
    std::vector<int64_t> start(v.sizes.size(), 0), limit = v.sizes, step(v.sizes.size(), 1);
    start[d] = v.sizes[d] - 1;
    value = b.slice(value, start, limit, step);
    v.sizes[d] = 1;
  }
  ViewAccess access = classify_view(base.type, v);
  if (access == ViewAccess::Whole) return b.reshape(value, base.type.dims);
  if (value.type.numel() == 0) return base;
  Value flat = flat_as(b, base, v.dtype);
  Value updated;
  if (access == ViewAccess::Gather) {
    updated = b.scatter_elements_1d(flat, element_indices(b, v, offset), value);
  } else {
    StridedPlan p;
    plan_strided(v, p);
    std::vector<int64_t> kept_sizes, sorted_sizes;
    for (int64_t d : p.kept) kept_sizes.push_back(v.sizes[d]);
    std::vector<int64_t> perm;  // view order -> stride order
    for (int64_t d : p.order) {
      perm.push_back(std::find(p.kept.begin(), p.kept.end(), d) - p.kept.begin());
      sorted_sizes.push_back(v.sizes[d]);
    }
    Value sorted = b.transpose(b.reshape(value, kept_sizes), perm);
    sorted_sizes.push_back(1);
    Value piece = b.reshape(sorted, sorted_sizes);
    Value pf = padded(b, flat, p);
    Value box = b.reshape(b.dynamic_slice(pf, {offset}, {p.window}), p.container);
    Value zero = b.constant_int(DType::I64, 0);
    std::vector<Value> zeros(p.container.size(), zero);
    Value new_box = b.dynamic_update_slice(box, piece, zeros);
    Value new_pf = b.dynamic_update_slice(pf, b.reshape(new_box, {p.window}), {offset});
    updated = new_pf.type.numel() == flat.type.numel() ? new_pf : b.slice(new_pf, {0}, {flat.type.numel()}, {1});
  }
  return unflat_to(b, updated, base);
}

}  // namespace torch_tpu::ops
