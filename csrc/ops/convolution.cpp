// Convolution, forward and backward, as stablehlo.convolution. The rules take
// the core-ATen ops convolution and convolution_backward (what conv1d/2d/3d,
// conv_transpose*, their autograd and compiled graphs reach). For a backend it
// does not know, ATen's _convolution would call convolution_overrideable,
// which has no meta kernel for the eager executor to size outputs with; a
// tpu kernel for convolution itself keeps calls away from it.
//
// One generic convolution covers every case: a transposed convolution is a
// convolution of the stride-dilated input (lhs_dilation) with the spatially
// reversed kernel; the input gradient of one kind is the other kind; the
// weight gradient convolves the input with the output gradient (window stride
// = dilation, kernel dilation = stride), grouped through batch_group_count.
// The high padding of every call is solved from the size PyTorch's meta kernel
// wants, which also absorbs output_padding and the rows a strided forward
// skipped. Half types convolve in float32 and round once, like the CPU's.
#include <algorithm>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using Dims = std::vector<int64_t>;

struct ConvParams {
  Dims stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  MatmulPrecision precision = MatmulPrecision::Highest;
};

// Argument `i` as `n` spatial values (a single value is repeated).
Dims spatial(const OpCall& c, size_t i, size_t n, int64_t fallback) {
  Dims v = c.arg(i).ints;
  if (v.empty()) v.assign(n, fallback);
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n) throw std::invalid_argument(c.op + ": expected " + std::to_string(n) + " spatial values");
  return v;
}

// stride, padding, dilation, transposed, output_padding, groups from argument `first` on.
ConvParams read_params(const OpCall& c, size_t first, size_t n) {
  ConvParams p;
  p.stride = spatial(c, first, n, 1);
  p.padding = spatial(c, first + 1, n, 0);
  p.dilation = spatial(c, first + 2, n, 1);
  p.transposed = c.arg(first + 3).b;
  p.output_padding = spatial(c, first + 4, n, 0);
  p.groups = c.arg(first + 5).i;
  p.precision = c.matmul_precision;
  // The checks ATen's _convolution makes and the meta kernel leaves out.
  auto fail = [&](const std::string& m) { throw std::invalid_argument(c.op + ": " + m); };
  if (p.groups < 1) fail("non-positive groups is not supported");
  for (size_t i = 0; i < n; ++i) {
    if (p.stride[i] < 1) fail("non-positive stride is not supported");
    if (p.dilation[i] < 1) fail("dilation should be greater than zero");
    if (p.padding[i] < 0) fail("negative padding is not supported");
    if (p.output_padding[i] < 0) fail("negative output_padding is not supported");
    if (p.transposed && p.output_padding[i] >= std::max(p.stride[i], p.dilation[i]))
      fail("output padding must be smaller than either stride or dilation");
  }
  return p;
}

// The CPU convolves every real type but bool (integers wrap around).
void require_real(const OpCall& c, DType t) {
  if (t == DType::Pred || hlo::is_complex(t))
    not_implemented_for(c.op.substr(0, c.op.find('.')), t);  // NotImplementedError, as the CPU
}

// Layout of the two leading dims of an operand or result: (batch, feature)
// or swapped; spatial dims follow in order.
struct Layout {
  bool swapped;
  std::string str(char a, char b, size_t n) const {
    std::string s = "[";
    s += swapped ? b : a;
    s += ", ";
    s += swapped ? a : b;
    for (size_t i = 0; i < n; ++i) s += ", " + std::to_string(i);
    return s + "]";
  }
};

std::string pairs(const Dims& lo, const Dims& hi) {
  std::string s = "dense<[";
  for (size_t i = 0; i < lo.size(); ++i)
    s += (i ? ", [" : "[") + std::to_string(lo[i]) + ", " + std::to_string(hi[i]) + "]";
  return s + "]> : tensor<" + std::to_string(lo.size()) + "x2xi64>";
}

struct Window {
  Dims strides, pad_lo, lhs_dilation, rhs_dilation;
  int64_t feature_groups = 1, batch_groups = 1;
  MatmulPrecision precision = MatmulPrecision::Highest;
};

// A convolution whose spatial result dims are `want`: the high padding is
// solved from them. `lhs` is (batch, feature) unless lhs_l.swapped, `rhs`
// (out, in) unless rhs_l.swapped; the result (batch, feature) unless out_l.swapped.
Value convolve(Builder& b, const Value& lhs, Layout lhs_l, const Value& rhs, Layout rhs_l, Layout out_l,
               const Window& w, const Dims& want) {
  size_t n = want.size();
  Dims hi(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = lhs.type.dims[2 + i], k = rhs.type.dims[2 + i];
    int64_t dilated_in = in == 0 ? 0 : (in - 1) * w.lhs_dilation[i] + 1;
    int64_t dilated_k = (k - 1) * w.rhs_dilation[i] + 1;
    // result = (dilated_in + lo + hi - dilated_k) / stride + 1 == want
    hi[i] = (want[i] - 1) * w.strides[i] + dilated_k - dilated_in - w.pad_lo[i];
  }
  int64_t batch = lhs.type.dims[lhs_l.swapped ? 1 : 0] / w.batch_groups;
  int64_t feature = rhs.type.dims[rhs_l.swapped ? 1 : 0];
  Dims dims = out_l.swapped ? Dims{feature, batch} : Dims{batch, feature};
  dims.insert(dims.end(), want.begin(), want.end());
  std::string attr = "batch_group_count = " + std::to_string(w.batch_groups) + " : i64, dimension_numbers = #stablehlo.conv<" +
                     lhs_l.str('b', 'f', n) + "x" + rhs_l.str('o', 'i', n) + "->" + out_l.str('b', 'f', n) +
                     ">, feature_group_count = " + std::to_string(w.feature_groups) +
                     " : i64, lhs_dilation = " + hlo::int_array(w.lhs_dilation) + ", padding = " + pairs(w.pad_lo, hi) +
                     ", rhs_dilation = " + hlo::int_array(w.rhs_dilation) + ", window_strides = " + hlo::int_array(w.strides);
  // f32 follows torch.set_float32_matmul_precision (a TPU's default is one
  // bf16 pass), f64 asks for full precision; operands widened from half
  // types are exact at any precision.
  if (lhs.type.dtype == DType::F32 || lhs.type.dtype == DType::F64) attr += precision_config(w.precision, lhs.type.dtype);
  return b.emit1("convolution", {lhs, rhs}, attr, TensorType(lhs.type.dtype, dims));
}

Dims ones(size_t n) { return Dims(n, 1); }

Dims spatial_dims(const TensorType& t) { return Dims(t.dims.begin() + 2, t.dims.end()); }

// Ordinary convolution of x (N, C, ...) with w (O, C/g, ...) to spatial size `want`.
Value conv_forward(Builder& b, const Value& x, const Value& w, const ConvParams& p, const Dims& want) {
  size_t n = want.size();
  Window win{p.stride, p.padding, ones(n), p.dilation, p.groups, 1, p.precision};
  return convolve(b, x, {false}, w, {false}, {false}, win, want);
}

// Transposed convolution of x (N, Cin, ...) with w (Cin, Cout/g, ...) to spatial size `want`.
Value conv_transposed(Builder& b, const Value& x, const Value& w, const ConvParams& p, const Dims& want) {
  size_t n = want.size();
  const Dims& wd = w.type.dims;
  int64_t g = p.groups, cin_g = wd[0] / g, cout_g = wd[1];
  // (Cin, Cout/g, k...) -> (Cout, Cin/g, k...), each kernel reversed.
  Dims split{g, cin_g, cout_g}, perm{0, 2, 1}, merged{g * cout_g, cin_g}, rev;
  for (size_t i = 0; i < n; ++i) {
    split.push_back(wd[2 + i]);
    merged.push_back(wd[2 + i]);
    perm.push_back(3 + i);
    rev.push_back(2 + i);
  }
  Value k = b.reshape(b.transpose(b.reshape(w, split), perm), merged);
  k = b.emit1("reverse", {k}, "dimensions = " + hlo::int_array(rev), k.type);
  Dims lo(n);
  for (size_t i = 0; i < n; ++i) lo[i] = p.dilation[i] * (wd[2 + i] - 1) - p.padding[i];
  Window win{ones(n), lo, p.stride, p.dilation, g, 1, p.precision};
  return convolve(b, x, {false}, k, {false}, {false}, win, want);
}

// d(loss)/d(weight) of an ordinary convolution with input x (N, C, ...) and
// output gradient gy (N, O, ...): (O, C/g, kernel...).
Value conv_weight_grad(Builder& b, const Value& x, const Value& gy, const ConvParams& p, const Dims& kernel) {
  size_t n = kernel.size();
  Window win{p.dilation, p.padding, ones(n), p.stride, 1, p.groups, p.precision};
  return convolve(b, x, {true}, gy, {true}, {true}, win, kernel);
}

Value bias_grad(Builder& b, const Value& gy) {
  Dims dims{0};
  for (int64_t i = 2; i < gy.type.rank(); ++i) dims.push_back(i);
  return b.reduce({gy}, {b.constant_float(gy.type.dtype, 0.0)}, dims,
                  [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
}

bool empty(const TensorType& t) { return t.numel() == 0; }

// convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups)
Values lower_convolution(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& x0 = operand(c, v, 0);
  const Value& w0 = operand(c, v, 1);
  require_real(c, x0.type.dtype);
  if (x0.type.rank() < 3 || w0.type.rank() != x0.type.rank())
    throw std::invalid_argument(c.op + ": expected batched input and weight of the same rank");
  size_t n = x0.type.rank() - 2;
  ConvParams p = read_params(c, 3, n);
  DType ct = compute_type(out.dtype);
  Value x = b.convert(x0, ct), w = b.convert(w0, ct);
  Value r = b.splat_float(TensorType(ct, out.dims), 0.0);
  if (!empty(out) && !empty(x.type) && !empty(w.type))
    r = p.transposed ? conv_transposed(b, x, w, p, spatial_dims(out)) : conv_forward(b, x, w, p, spatial_dims(out));
  if (!c.arg(2).is_none())
    r = b.add(r, b.broadcast_in_dim(b.convert(operand(c, v, 2), ct), r.type.dims, {1}));
  return Values{b.convert(r, out.dtype)};
}

// The three gradients; `first` is the index of the stride argument and
// `mask` the output_mask argument.
Values lower_convolution_backward(Builder& b, const OpCall& c, const Values& v, size_t first, size_t mask) {
  const Value& gy0 = operand(c, v, 0);
  const Value& x0 = operand(c, v, 1);
  const Value& w0 = operand(c, v, 2);
  require_real(c, x0.type.dtype);
  size_t n = x0.type.rank() - 2;
  ConvParams p = read_params(c, first, n);
  DType ct = compute_type(x0.type.dtype);
  Value gy = b.convert(gy0, ct), x = b.convert(x0, ct), w = b.convert(w0, ct);
  const Dims& m = c.arg(mask).ints;
  bool any_empty = empty(gy.type) || empty(x.type) || empty(w.type);
  Values r;
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    const TensorType& t = c.outputs[o];
    Value g = b.splat_float(TensorType(ct, t.dims), 0.0);
    bool wanted = o < m.size() && m[o] != 0;
    if (wanted && o == 0 && !any_empty)
      g = p.transposed ? conv_forward(b, gy, w, p, spatial_dims(t)) : conv_transposed(b, gy, w, p, spatial_dims(t));
    if (wanted && o == 1 && !any_empty)
      g = p.transposed ? conv_weight_grad(b, gy, x, p, spatial_dims(t)) : conv_weight_grad(b, x, gy, p, spatial_dims(t));
    if (wanted && o == 2 && t.rank() == 1 && !empty(gy.type)) g = bias_grad(b, gy);
    r.push_back(b.convert(g, t.dtype));
  }
  return r;
}

TORCH_TPU_LOWERING("convolution", lower_convolution);
// _convolution(..., groups, benchmark, deterministic, cudnn_enabled, allow_tf32):
// the same first nine arguments; the flags only choose CPU/GPU kernels.
TORCH_TPU_LOWERING("_convolution", lower_convolution);

// convolution_backward(grad_output, input, weight, bias_sizes?, stride, padding,
//     dilation, transposed, output_padding, groups, output_mask)
TORCH_TPU_LOWERING("convolution_backward", [](Builder& b, const OpCall& c, const Values& v) {
  return lower_convolution_backward(b, c, v, 4, 10);
});

}  // namespace
}  // namespace torch_tpu::ops
