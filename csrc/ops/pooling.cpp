// Max and average pooling over 2 or 3 spatial dims (1-d pooling reaches the
// 2-d ops through PyTorch's composites), forward and backward.
//
// Forward: stablehlo.reduce_window over the explicitly padded input; the
// high padding is solved from the output size PyTorch's meta kernel gives,
// which covers ceil_mode. Max pooling reduces (value, flat index) pairs with
// the CPU's choice rule (pooling_common.h), so indices equal the CPU's.
// Backward: max pooling scatter-adds the gradient at the saved indices; average
// pooling spreads grad/divisor over each window (a stride-dilated, padded
// reduce_window, the transpose of the forward sum).
#include <limits>
#include <stdexcept>

#include "ops/pooling_common.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using namespace pooling;

struct Geometry {
  Dims kernel, stride, padding, dilation;
};

// kernel_size, stride, padding[, dilation] from argument `first` on.
Geometry read_geometry(const OpCall& c, size_t first, size_t n, bool has_dilation) {
  Geometry g;
  g.kernel = int_arg(c, first, n, {});
  g.stride = int_arg(c, first + 1, n, g.kernel);
  g.padding = int_arg(c, first + 2, n, {0});
  g.dilation = has_dilation ? int_arg(c, first + 3, n, {1}) : Dims(n, 1);
  for (size_t i = 0; i < n; ++i)
    if (g.kernel[i] < 1 || g.stride[i] < 1 || g.dilation[i] < 1 || g.padding[i] < 0)
      throw std::invalid_argument(c.op + ": kernel_size, stride and dilation must be positive, padding non-negative");
  return g;
}

// The high padding that makes the windows produce `want` outputs from `in`.
Dims high_padding(const Geometry& g, const Dims& in, const Dims& want) {
  Dims hi(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    hi[i] = (want[i] - 1) * g.stride[i] + (g.kernel[i] - 1) * g.dilation[i] + 1 - in[i] - g.padding[i];
  return hi;
}

Value zeros(Builder& b, const TensorType& t) { return b.splat_float(t, 0.0); }

// max_pool{2,3}d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)
Values lower_max_pool(Builder& b, const OpCall& c, const Values& v, size_t n) {
  const Value& x = operand(c, v, 0);
  DType t = x.type.dtype;
  if (t == DType::Pred || hlo::is_complex(t))  // the CPU kernel takes every real type but bool
    not_implemented_for(c.op.substr(0, c.op.find('.')), t);  // NotImplementedError, as the CPU
  Geometry g = read_geometry(c, 1, n, true);
  const TensorType &out = c.outputs[0], &idx = c.outputs[1];
  if (out.numel() == 0 || x.type.numel() == 0) return Values{zeros(b, out), zeros(b, idx)};
  Dims hi = high_padding(g, spatial_dims(x.type, n), spatial_dims(out, n));
  Value low = lowest(b, t);
  Value past_end = b.constant_int(DType::I64, std::numeric_limits<int64_t>::max());
  Value xs = pad_spatial(b, x, low, g.padding, hi);
  Value pos = pad_spatial(b, flat_positions(b, x.type, n), past_end, g.padding, hi);
  Values r = reduce_window(b, {xs, pos}, {low, past_end}, g.kernel, g.stride, g.dilation, max_with_index);
  return Values{b.reshape(r[0], out.dims), b.reshape(b.convert(r[1], idx.dtype), idx.dims)};
}

// max_pool{2,3}d_with_indices_backward(grad_output, self, kernel_size, stride,
//     padding, dilation, ceil_mode, indices)
Values lower_max_pool_backward(Builder& b, const OpCall& c, const Values& v, size_t n) {
  require_float(c, c.outputs[0].dtype);
  Value pos = b.convert(operand(c, v, 7), DType::I64);
  return Values{scatter_add_planes(b, operand(c, v, 0), pos, c.outputs[0], n)};
}

// Per output position, the CPU's divisor: the window's size clipped to the
// padded input (count_include_pad) or to the input itself.
Value avg_divisor(Builder& b, const OpCall& c, const Geometry& g, const Dims& in, const TensorType& out, size_t n,
                  bool include_pad, size_t override_arg, DType ct) {
  if (!c.arg(override_arg).is_none()) {
    if (c.arg(override_arg).i == 0) throw std::invalid_argument(c.op + ": divisor must be not zero");
    return b.splat_float(TensorType(ct, out.dims), static_cast<double>(c.arg(override_arg).i));
  }
  Dims want = spatial_dims(out, n);
  Value count = b.splat_int(TensorType(DType::I64, want), 1);
  for (size_t i = 0; i < n; ++i) {
    Dims d{want[i]};
    auto k = [&](int64_t x) { return b.splat_int(TensorType(DType::I64, d), x); };
    Value start = b.subtract(b.multiply(iota64(b, d, 0), k(g.stride[i])), k(g.padding[i]));
    Value end = b.minimum(b.add(start, k(g.kernel[i])), k(in[i] + g.padding[i]));
    if (!include_pad) {
      start = b.maximum(start, k(0));
      end = b.minimum(end, k(in[i]));
    }
    count = b.multiply(count, b.broadcast_in_dim(b.subtract(end, start), want, {static_cast<int64_t>(i)}));
  }
  Dims map;
  for (size_t i = 0; i < n; ++i) map.push_back(out.rank() - n + i);
  return b.broadcast_in_dim(b.convert(count, ct), out.dims, map);
}

// avg_pool{2,3}d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override?)
Values lower_avg_pool(Builder& b, const OpCall& c, const Values& v, size_t n) {
  const TensorType& out = c.outputs[0];
  const Value& x0 = operand(c, v, 0);
  // int64 sums in int64 and divides with truncation, like the CPU kernel.
  if (x0.type.dtype != DType::I64) require_float(c, x0.type.dtype);
  Geometry g = read_geometry(c, 1, n, false);
  DType ct = compute_type(out.dtype);
  if (out.numel() == 0 || x0.type.numel() == 0) return Values{zeros(b, out)};
  Dims in = spatial_dims(x0.type, n);
  Value x = b.convert(x0, ct);
  Value zero = b.constant_float(ct, 0.0);
  Value xs = pad_spatial(b, x, zero, g.padding, high_padding(g, in, spatial_dims(out, n)));
  hlo::RegionBody add = [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; };
  Value sum = reduce_window(b, {xs}, {zero}, g.kernel, g.stride, g.dilation, add)[0];
  Value div = avg_divisor(b, c, g, in, out, n, c.arg(5).b, 6, ct);
  return Values{b.convert(b.divide(b.reshape(sum, out.dims), div), out.dtype)};
}

// The windows of `spread` (kernel k, stride 1) summed as the CPU's
// float16/bfloat16 kernel adds into grad_input: output by output in row-major
// order (window offset ascending), each partial sum rounded to the half type.
// A sum in float32 rounds once, which a cancelling sum of rounded terms can
// leave further from the exact value than the CPU's.
Value half_sums(Builder& b, const Value& spread, const Dims& kernel, const TensorType& out) {
  size_t n = kernel.size(), rank = spread.type.rank();
  Dims in = spatial_dims(out, n);
  Value acc;
  Dims offset(n, 0);
  for (;;) {
    Dims start(rank, 0), limit = spread.type.dims;
    for (size_t i = 0; i < n; ++i) {
      start[rank - n + i] = offset[i];
      limit[rank - n + i] = offset[i] + in[i];
    }
    Value term = b.slice(spread, start, limit, Dims(rank, 1));
    acc = acc.name.empty() ? term : b.convert(b.convert(b.add(acc, term), out.dtype), spread.type.dtype);
    size_t i = n;  // next offset, the last dimension fastest
    while (i > 0 && ++offset[i - 1] == kernel[i - 1]) offset[--i] = 0;
    if (i == 0) return acc;
  }
}

// avg_pool{2,3}d_backward(grad_output, self, kernel_size, stride, padding,
//     ceil_mode, count_include_pad, divisor_override?)
Values lower_avg_pool_backward(Builder& b, const OpCall& c, const Values& v, size_t n) {
  const TensorType& out = c.outputs[0];
  require_float(c, out.dtype);
  const Value& gy0 = operand(c, v, 0);
  Geometry g = read_geometry(c, 2, n, false);
  DType ct = compute_type(out.dtype);
  if (out.numel() == 0 || gy0.type.numel() == 0) return Values{zeros(b, out)};
  Dims in = spatial_dims(out, n), got = spatial_dims(gy0.type, n);
  // The CPU rounds grad / divisor to the gradient's dtype before summing it.
  Value gy = b.divide(b.convert(gy0, ct), avg_divisor(b, c, g, in, gy0.type, n, c.arg(6).b, 7, ct));
  gy = b.convert(b.convert(gy, out.dtype), ct);
  // Input i receives output o when o*s - p <= i < o*s - p + k: place output
  // o at o*s + k-1-p and sum windows of k.
  Dims lo(n), hi(n), interior(n);
  for (size_t i = 0; i < n; ++i) {
    lo[i] = g.kernel[i] - 1 - g.padding[i];
    interior[i] = g.stride[i] - 1;
    hi[i] = in[i] + g.kernel[i] - 1 - lo[i] - ((got[i] - 1) * g.stride[i] + 1);
  }
  Value zero = b.constant_float(ct, 0.0);
  Value spread = pad_spatial(b, gy, zero, lo, hi, interior);
  if (ct != out.dtype) return Values{b.convert(b.reshape(half_sums(b, spread, g.kernel, out), out.dims), out.dtype)};
  hlo::RegionBody add = [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; };
  Value r = reduce_window(b, {spread}, {zero}, g.kernel, Dims(n, 1), Dims(n, 1), add)[0];
  return Values{b.convert(b.reshape(r, out.dims), out.dtype)};
}

TORCH_TPU_LOWERING("max_pool2d_with_indices", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_max_pool(b, c, v, 2);
});
TORCH_TPU_LOWERING("max_pool3d_with_indices", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_max_pool(b, c, v, 3);
});
TORCH_TPU_LOWERING("max_pool2d_with_indices_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_max_pool_backward(b, c, v, 2);
});
TORCH_TPU_LOWERING("max_pool3d_with_indices_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_max_pool_backward(b, c, v, 3);
});
TORCH_TPU_LOWERING("avg_pool2d", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_avg_pool(b, c, v, 2);
});
TORCH_TPU_LOWERING("avg_pool3d", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_avg_pool(b, c, v, 3);
});
TORCH_TPU_LOWERING("avg_pool2d_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_avg_pool_backward(b, c, v, 2);
});
TORCH_TPU_LOWERING("avg_pool3d_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_avg_pool_backward(b, c, v, 3);
});

}  // namespace
}  // namespace torch_tpu::ops
