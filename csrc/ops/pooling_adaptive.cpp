// Adaptive average and max pooling over 2 or 3 spatial dims (1-d reaches the
// 2-d ops through PyTorch's composites; an output of 1x1 average is a mean),
// forward and backward.
//
// Output o of a dim of size `in` pooled to `out` covers inputs
// [floor(o*in/out), ceil((o+1)*in/out)): windows of unequal size, so no
// reduce_window. Instead every window is gathered at a fixed size K (the
// largest window), the positions past a window's end masked off, and reduced;
// backward scatter-adds the gradient at the same positions (average) or at
// the saved indices (max).
#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

#include "ops/pooling_common.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using namespace pooling;

// The windows of every output position, over dims [O1..On, K1..Kn].
struct Windows {
  Dims out, k;
  Value pos;                // flat in-plane input position (clamped into the input)
  Value valid;              // the position lies inside the window
  std::vector<Value> size;  // per spatial dim: each output's window length, [Oi] i64
};

Windows adaptive_windows(Builder& b, const Dims& in, const Dims& out) {
  size_t n = in.size();
  Windows w;
  w.out = out;
  for (size_t i = 0; i < n; ++i) {
    int64_t k = 0;
    for (int64_t o = 0; o < out[i]; ++o)
      k = std::max(k, ((o + 1) * in[i] + out[i] - 1) / out[i] - o * in[i] / out[i]);
    w.k.push_back(k);
  }
  Dims all = out;
  all.insert(all.end(), w.k.begin(), w.k.end());
  w.pos = b.splat_int(TensorType(DType::I64, all), 0);
  w.valid = b.broadcast_to(b.constant_bool(true), all);
  int64_t stride = 1;
  for (size_t i = n; i-- > 0;) {
    Dims d{out[i], w.k[i]};
    auto k = [&](int64_t x) { return b.splat_int(TensorType(DType::I64, d), x); };
    Value o = iota64(b, d, 0);
    Value start = b.divide(b.multiply(o, k(in[i])), k(out[i]));
    Value end = b.divide(b.add(b.multiply(b.add(o, k(1)), k(in[i])), k(out[i] - 1)), k(out[i]));
    Value p = b.add(start, iota64(b, d, 1));
    Dims map{static_cast<int64_t>(i), static_cast<int64_t>(n + i)};
    w.valid = b.binary("and", w.valid, b.broadcast_in_dim(b.compare(p, end, "LT"), all, map));
    Value clamped = b.minimum(p, k(in[i] - 1));
    w.pos = b.add(w.pos, b.broadcast_in_dim(b.multiply(clamped, k(stride)), all, map));
    stride *= in[i];
    auto first_column = [&](const Value& t) { return b.slice(t, {0, 0}, {out[i], 1}, {1, 1}); };
    w.size.insert(w.size.begin(), b.subtract(first_column(end), first_column(start)));
  }
  for (size_t i = 0; i < n; ++i) w.size[i] = b.reshape(w.size[i], {out[i]});
  return w;
}

// The CPU's checks: every dim after the first must be non-empty (2-d
// average pooling: only the spatial dims).
void require_nonempty(const OpCall& c, const TensorType& x, size_t n) {
  size_t first = c.op == "_adaptive_avg_pool2d" ? x.dims.size() - n : 1;
  for (size_t d = first; d < x.dims.size(); ++d)
    if (x.dims[d] == 0)
      throw std::invalid_argument(c.op + ": expected input to have non-zero size for non-batch dimensions, but "
                                  "dimension " + std::to_string(d) + " is empty");
}

// x's values at the in-plane positions `pos`, plane by plane: (planes, pos dims...).
Value gather_planes(Builder& b, const Value& x, const Value& pos, size_t n) {
  int64_t p = planes(x.type, n), m = pos.type.numel(), per_plane = x.type.numel() / p;
  Value flat = b.reshape(x, {p, per_plane});
  Value at = b.reshape(pos, {m, 1});
  Value g = b.emit1("gather", {flat, at},
                    "dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], "
                    "start_index_map = [1], index_vector_dim = 1>, slice_sizes = " +
                        hlo::int_array({p, 1}) + ", indices_are_sorted = false",
                    TensorType(x.type.dtype, {p, m}));
  Dims dims{p};
  dims.insert(dims.end(), pos.type.dims.begin(), pos.type.dims.end());
  return b.reshape(g, dims);
}
// x's windows: (planes, O..., K...) values.
Value gather_windows(Builder& b, const Value& x, const Windows& w, size_t n) { return gather_planes(b, x, w.pos, n); }

// `t` (O..., K...) broadcast over `planes` leading planes.
Value over_planes(Builder& b, const Value& t, int64_t planes) {
  Dims dims{planes}, map;
  dims.insert(dims.end(), t.type.dims.begin(), t.type.dims.end());
  for (int64_t i = 0; i < t.type.rank(); ++i) map.push_back(i + 1);
  return b.broadcast_in_dim(t, dims, map);
}

// Divides `v` (planes, O...) by each dim's window length in turn, like the
// CPU; `round_to` rounds after each division (the CPU's backward divides in
// the gradient's dtype).
Value divide_by_sizes(Builder& b, Value v, const Windows& w, DType round_to) {
  DType ct = v.type.dtype;
  for (size_t i = 0; i < w.size.size(); ++i) {
    v = b.divide(v, b.broadcast_in_dim(b.convert(w.size[i], ct), v.type.dims, {static_cast<int64_t>(i + 1)}));
    v = b.convert(b.convert(v, round_to), ct);
  }
  return v;
}

Dims trailing(size_t first, size_t count) {
  Dims d;
  for (size_t i = 0; i < count; ++i) d.push_back(static_cast<int64_t>(first + i));
  return d;
}

// _adaptive_avg_pool{2,3}d(self, output_size)
Values lower_adaptive_avg(Builder& b, const OpCall& c, const Values& v, size_t n) {
  const TensorType& out = c.outputs[0];
  const Value& x0 = operand(c, v, 0);
  require_float(c, x0.type.dtype);
  require_nonempty(c, x0.type, n);
  DType ct = compute_type(out.dtype);
  if (out.numel() == 0 || x0.type.numel() == 0) return Values{b.splat_float(out, 0.0)};
  Windows w = adaptive_windows(b, spatial_dims(x0.type, n), spatial_dims(out, n));
  Value vals = gather_windows(b, b.convert(x0, ct), w, n);
  Value zero = b.constant_float(ct, 0.0);
  vals = b.select(over_planes(b, w.valid, vals.type.dims[0]), vals, b.broadcast_to(zero, vals.type.dims));
  Value sum = b.reduce({vals}, {zero}, trailing(1 + n, n),
                       [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
  return Values{b.reshape(b.convert(divide_by_sizes(b, sum, w, ct), out.dtype), out.dims)};
}

// grad_input from the per-output terms `gy` (planes, O...) as the CPU's
// float16/bfloat16 kernel adds them: output by output in row-major order,
// each partial sum rounded to the half type (a float32 sum rounds once,
// which a cancelling sum of rounded terms can leave further from the
// exact value than the CPU's). Input i of a dim is covered by outputs
// floor(i*out/in) .. ceil((i+1)*out/in) - 1; the j-th of them is gathered
// for every input, and the terms summed in the order of the outputs.
// Empty when the inputs are covered by more than `max_terms` outputs
// (strong upsampling): the scatter-add then sums in float32.
constexpr int64_t kMaxOrderedTerms = 64;
std::optional<Value> ordered_half_sums(Builder& b, const Value& gy, const Dims& in, const Dims& out, const TensorType& result) {
  size_t n = in.size();
  Dims most(n, 0);
  int64_t terms = 1;
  for (size_t d = 0; d < n; ++d) {
    for (int64_t i = 0; i < in[d]; ++i)
      most[d] = std::max(most[d], ((i + 1) * out[d] + in[d] - 1) / in[d] - i * out[d] / in[d]);
    terms *= most[d];
  }
  if (terms > kMaxOrderedTerms) return std::nullopt;
  Dims all = in;  // (I..., J...)
  all.insert(all.end(), most.begin(), most.end());
  Value pos = b.splat_int(TensorType(DType::I64, all), 0);
  Value valid = b.broadcast_to(b.constant_bool(true), all);
  int64_t stride = 1;
  for (size_t d = n; d-- > 0;) {
    Dims ij{in[d], most[d]};
    auto k = [&](int64_t x) { return b.splat_int(TensorType(DType::I64, ij), x); };
    Value i = iota64(b, ij, 0);
    Value o = b.add(b.divide(b.multiply(i, k(out[d])), k(in[d])), iota64(b, ij, 1));
    Dims map{static_cast<int64_t>(d), static_cast<int64_t>(n + d)};
    Value covers = b.compare(b.multiply(o, k(in[d])), b.multiply(b.add(i, k(1)), k(out[d])), "LT");
    valid = b.binary("and", valid, b.broadcast_in_dim(covers, all, map));
    pos = b.add(pos, b.broadcast_in_dim(b.multiply(b.minimum(o, k(out[d] - 1)), k(stride)), all, map));
    stride *= out[d];
  }
  Value t = gather_planes(b, gy, pos, n);  // (p, I..., J...)
  int64_t p = t.type.dims[0];
  t = b.select(over_planes(b, valid, p), t, b.splat_float(t.type, 0.0));
  Dims at(n, 0), sum_dims{p};
  sum_dims.insert(sum_dims.end(), in.begin(), in.end());
  Value acc;
  for (;;) {
    Dims start(1 + 2 * n, 0), limit = t.type.dims;
    for (size_t d = 0; d < n; ++d) {
      start[1 + n + d] = at[d];
      limit[1 + n + d] = at[d] + 1;
    }
    Value term = b.reshape(b.slice(t, start, limit, Dims(1 + 2 * n, 1)), sum_dims);
    acc = acc.name.empty() ? term : b.convert(b.convert(b.add(acc, term), result.dtype), term.type.dtype);
    size_t d = n;  // the next output, the last dim fastest
    while (d > 0 && ++at[d - 1] == most[d - 1]) at[--d] = 0;
    if (d == 0) return b.reshape(b.convert(acc, result.dtype), result.dims);
  }
}

// _adaptive_avg_pool{2,3}d_backward(grad_output, self)
Values lower_adaptive_avg_backward(Builder& b, const OpCall& c, const Values& v, size_t n) {
  const TensorType& out = c.outputs[0];
  require_float(c, out.dtype);
  const Value& gy0 = operand(c, v, 0);
  DType ct = compute_type(out.dtype);
  if (out.numel() == 0 || gy0.type.numel() == 0) return Values{b.splat_float(out, 0.0)};
  Windows w = adaptive_windows(b, spatial_dims(out, n), spatial_dims(gy0.type, n));
  int64_t p = planes(gy0.type, n);
  Dims pd{p};
  for (int64_t d : w.out) pd.push_back(d);
  Value gy = divide_by_sizes(b, b.reshape(b.convert(gy0, ct), pd), w, out.dtype);
  if (ct != out.dtype)
    if (auto r = ordered_half_sums(b, gy, spatial_dims(out, n), spatial_dims(gy0.type, n), out)) return Values{*r};
  Value valid = over_planes(b, w.valid, p);
  Dims map = trailing(0, n + 1);
  Value spread = b.broadcast_in_dim(gy, valid.type.dims, map);
  spread = b.select(valid, spread, b.splat_float(spread.type, 0.0));
  return Values{scatter_add_planes(b, spread, over_planes(b, w.pos, p), out, n)};
}

// adaptive_max_pool{2,3}d(self, output_size) -> (values, indices)
Values lower_adaptive_max(Builder& b, const OpCall& c, const Values& v, size_t n) {
  const TensorType &out = c.outputs[0], &idx = c.outputs[1];
  const Value& x = operand(c, v, 0);
  require_float(c, x.type.dtype);
  require_nonempty(c, x.type, n);
  if (out.numel() == 0 || x.type.numel() == 0) return Values{b.splat_float(out, 0.0), b.splat_int(idx, 0)};
  Windows w = adaptive_windows(b, spatial_dims(x.type, n), spatial_dims(out, n));
  Value vals = gather_windows(b, x, w, n);
  int64_t p = vals.type.dims[0];
  Value valid = over_planes(b, w.valid, p);
  Value lowest = b.constant_float(x.type.dtype, -std::numeric_limits<double>::infinity());
  Value past_end = b.constant_int(DType::I64, std::numeric_limits<int64_t>::max());
  vals = b.select(valid, vals, b.broadcast_to(lowest, vals.type.dims));
  Value pos = b.select(valid, over_planes(b, w.pos, p), b.broadcast_to(past_end, vals.type.dims));
  Values r = b.reduce({vals, pos}, {lowest, past_end}, trailing(1 + n, n), max_with_index);
  return Values{b.reshape(r[0], out.dims), b.reshape(b.convert(r[1], idx.dtype), idx.dims)};
}

// adaptive_max_pool{2,3}d_backward(grad_output, self, indices)
Values lower_adaptive_max_backward(Builder& b, const OpCall& c, const Values& v, size_t n) {
  require_float(c, c.outputs[0].dtype);
  Value pos = b.convert(operand(c, v, 2), DType::I64);
  return Values{scatter_add_planes(b, operand(c, v, 0), pos, c.outputs[0], n)};
}

TORCH_TPU_LOWERING("_adaptive_avg_pool2d", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_adaptive_avg(b, c, v, 2);
});
TORCH_TPU_LOWERING("_adaptive_avg_pool3d", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_adaptive_avg(b, c, v, 3);
});
TORCH_TPU_LOWERING("_adaptive_avg_pool2d_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_adaptive_avg_backward(b, c, v, 2);
});
TORCH_TPU_LOWERING("_adaptive_avg_pool3d_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_adaptive_avg_backward(b, c, v, 3);
});
TORCH_TPU_LOWERING("adaptive_max_pool2d", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_adaptive_max(b, c, v, 2);
});
TORCH_TPU_LOWERING("adaptive_max_pool3d", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_adaptive_max(b, c, v, 3);
});
TORCH_TPU_LOWERING("adaptive_max_pool2d_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_adaptive_max_backward(b, c, v, 2);
});
TORCH_TPU_LOWERING("adaptive_max_pool3d_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_adaptive_max_backward(b, c, v, 3);
});

}  // namespace
}  // namespace torch_tpu::ops
