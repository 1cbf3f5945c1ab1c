// The fused LSTM and GRU cells: aten::lstm / aten::gru use them on every
// device but the CPU (per time step, from the gates the caller's matmuls
// computed). Gate math runs in float32 for reduced-precision inputs. The
// workspace (the activated gates, plus what the GRU backward needs) is ours:
// only the matching backward rule below reads it.
#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

DType compute_type(DType t) { return t == DType::BF16 || t == DType::F16 ? DType::F32 : t; }

// Chunk k of `n` along dim 1.
Value chunk(Builder& b, const Value& x, int64_t k, int64_t n) {
  int64_t h = x.type.dims[1] / n;
  return b.slice(x, {0, k * h}, {x.type.dims[0], (k + 1) * h}, {1, 1});
}

Value sigmoid(Builder& b, const Value& x) { return b.unary("logistic", x); }
Value tanh(Builder& b, const Value& x) { return b.unary("tanh", x); }
Value one_minus(Builder& b, const Value& x) { return b.subtract(b.splat_float(x.type, 1.0), x); }

// input_gates + hidden_gates (+ both biases, broadcast over the batch), in `ct`.
Value gates_sum(Builder& b, const OpCall& c, const Values& v, DType ct) {
  Value g = b.add(b.convert(operand(c, v, 0), ct), b.convert(operand(c, v, 1), ct));
  for (size_t i : {size_t{3}, size_t{4}})
    if (const Value* bias = optional_operand(c, v, i)) g = b.add(g, b.broadcast_in_dim(b.convert(*bias, ct), g.type.dims, {1}));
  return g;
}

Value bias_grad(Builder& b, const Value& g, const TensorType& out, bool has_bias) {
  if (!has_bias) return b.splat_float(out, 0.0);  // undefined result: a placeholder the executor drops
  Value s = b.reduce({g}, {b.constant_float(g.type.dtype, 0.0)}, {0},
                     [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
  return b.convert(s, out.dtype);
}

// _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias?, hidden_bias?) -> (hy, cy, workspace)
TORCH_TPU_LOWERING("_thnn_fused_lstm_cell", [](Builder& b, const OpCall& c, const Values& v) {
  DType ct = compute_type(c.outputs[0].dtype);
  Value g = gates_sum(b, c, v, ct);
  Value i = sigmoid(b, chunk(b, g, 0, 4)), f = sigmoid(b, chunk(b, g, 1, 4));
  Value cell = tanh(b, chunk(b, g, 2, 4)), o = sigmoid(b, chunk(b, g, 3, 4));
  Value cy = b.add(b.multiply(f, b.convert(operand(c, v, 2), ct)), b.multiply(i, cell));
  Value hy = b.multiply(o, tanh(b, cy));
  Value workspace = b.concatenate({i, f, cell, o}, 1);
  return Values{b.convert(hy, c.outputs[0].dtype), b.convert(cy, c.outputs[1].dtype),
                b.convert(workspace, c.outputs[2].dtype)};
});

// _thnn_fused_lstm_cell_backward_impl(grad_hy?, grad_cy?, cx, cy, workspace, has_bias)
//   -> (grad_gates, grad_cx, grad_bias)
TORCH_TPU_LOWERING("_thnn_fused_lstm_cell_backward_impl", [](Builder& b, const OpCall& c, const Values& v) {
  DType ct = compute_type(c.outputs[0].dtype);
  Value cx = b.convert(operand(c, v, 2), ct), cy = b.convert(operand(c, v, 3), ct);
  Value ws = b.convert(operand(c, v, 4), ct);
  Value i = chunk(b, ws, 0, 4), f = chunk(b, ws, 1, 4), cell = chunk(b, ws, 2, 4), o = chunk(b, ws, 3, 4);
  auto grad_or_zero = [&](size_t k) {
    const Value* g = optional_operand(c, v, k);
    return g ? b.convert(*g, ct) : b.splat_float(cx.type, 0.0);
  };
  Value ghy = grad_or_zero(0), gcy = grad_or_zero(1);
  Value tanh_cy = tanh(b, cy);
  // d(cy) through hy = o * tanh(cy), plus the incoming grad_cy
  Value gc = b.add(b.multiply(b.multiply(ghy, o), one_minus(b, b.multiply(tanh_cy, tanh_cy))), gcy);
  Value gi = b.multiply(b.multiply(gc, cell), b.multiply(i, one_minus(b, i)));
  Value gf = b.multiply(b.multiply(gc, cx), b.multiply(f, one_minus(b, f)));
  Value gcell = b.multiply(b.multiply(gc, i), one_minus(b, b.multiply(cell, cell)));
  Value go = b.multiply(b.multiply(ghy, tanh_cy), b.multiply(o, one_minus(b, o)));
  Value grad_gates = b.concatenate({gi, gf, gcell, go}, 1);
  return Values{b.convert(grad_gates, c.outputs[0].dtype), b.convert(b.multiply(gc, f), c.outputs[1].dtype),
                bias_grad(b, grad_gates, c.outputs[2], c.arg(5).b)};
});

// _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias?, hidden_bias?) -> (hy, workspace)
// Gates r, z, n: n = tanh(i_n + r * h_n), hy = n + z * (hx - n).
// Workspace [B, 5H]: r, z, n, h_n (with its bias), hx.
TORCH_TPU_LOWERING("_thnn_fused_gru_cell", [](Builder& b, const OpCall& c, const Values& v) {
  DType ct = compute_type(c.outputs[0].dtype);
  auto with_bias = [&](size_t gates, size_t bias) {
    Value g = b.convert(operand(c, v, gates), ct);
    if (const Value* p = optional_operand(c, v, bias)) g = b.add(g, b.broadcast_in_dim(b.convert(*p, ct), g.type.dims, {1}));
    return g;
  };
  Value ig = with_bias(0, 3), hg = with_bias(1, 4);
  Value hx = b.convert(operand(c, v, 2), ct);
  Value r = sigmoid(b, b.add(chunk(b, ig, 0, 3), chunk(b, hg, 0, 3)));
  Value z = sigmoid(b, b.add(chunk(b, ig, 1, 3), chunk(b, hg, 1, 3)));
  Value hn = chunk(b, hg, 2, 3);
  Value n = tanh(b, b.add(chunk(b, ig, 2, 3), b.multiply(r, hn)));
  Value hy = b.add(n, b.multiply(z, b.subtract(hx, n)));
  return Values{b.convert(hy, c.outputs[0].dtype), b.convert(b.concatenate({r, z, n, hn, hx}, 1), c.outputs[1].dtype)};
});

// _thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias)
//   -> (grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias)
TORCH_TPU_LOWERING("_thnn_fused_gru_cell_backward", [](Builder& b, const OpCall& c, const Values& v) {
  DType ct = compute_type(c.outputs[0].dtype);
  Value gh = b.convert(operand(c, v, 0), ct), ws = b.convert(operand(c, v, 1), ct);
  Value r = chunk(b, ws, 0, 5), z = chunk(b, ws, 1, 5), n = chunk(b, ws, 2, 5), hn = chunk(b, ws, 3, 5),
        hx = chunk(b, ws, 4, 5);
  Value gz = b.multiply(b.multiply(gh, b.subtract(hx, n)), b.multiply(z, one_minus(b, z)));
  Value gn = b.multiply(b.multiply(gh, one_minus(b, z)), one_minus(b, b.multiply(n, n)));
  Value gr = b.multiply(b.multiply(gn, hn), b.multiply(r, one_minus(b, r)));
  Value g_input = b.concatenate({gr, gz, gn}, 1);
  Value g_hidden = b.concatenate({gr, gz, b.multiply(gn, r)}, 1);
  bool has_bias = c.arg(2).b;
  return Values{b.convert(g_input, c.outputs[0].dtype), b.convert(g_hidden, c.outputs[1].dtype),
                b.convert(b.multiply(gh, z), c.outputs[2].dtype), bias_grad(b, g_input, c.outputs[3], has_bias),
                bias_grad(b, g_hidden, c.outputs[4], has_bias)};
});

}  // namespace
}  // namespace torch_tpu::ops
