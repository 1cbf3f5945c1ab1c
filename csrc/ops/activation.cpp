// Activation functions and their backward ops. Half types compute in f32 like
// the CPU kernels; formulas follow the CPU kernels so results agree to rounding.
#include <cmath>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// The type math runs in for a result of type `out`.
TensorType compute_of(const TensorType& out) { return out.with_dtype(compute_type(out.dtype)); }

// Operand `i` converted and broadcast to the compute type of the output.
Value in(Builder& b, const OpCall& c, const Values& v, size_t i) {
  return to_type(b, operand(c, v, i), compute_of(c.outputs[0]));
}

Value k(Builder& b, const Value& like, double x) { return b.splat_float(like.type, x); }

Value done(Builder& b, const OpCall& c, const Value& r) { return b.convert(r, c.outputs[0].dtype); }

void require_float(const OpCall& c, const TensorType& t) {
  if (!hlo::is_float(t.dtype))
    throw std::invalid_argument(c.op + ": not implemented for " + std::string(hlo::dtype_name(t.dtype)));
}

// The normal CDF 0.5 * (1 + erf(x / sqrt 2)), through CHLO (the PJRT compiler
// expands it). Below 0 it is 0.5 * erfc(-x / sqrt 2): 1 + erf(x) cancels to a
// few ulps of garbage in the tail, which x times it would magnify.
Value normal_cdf(Builder& b, const Value& x) {
  Value z = b.multiply(x, b.splat_float(x.type, 0.70710678118654752440));
  Value half = b.splat_float(x.type, 0.5);
  Value upper = b.multiply(half, b.add(b.splat_float(x.type, 1.0), b.emit1("chlo.erf", {z}, "", x.type)));
  Value lower = b.multiply(half, b.emit1("chlo.erfc", {b.negate(z)}, "", x.type));
  return b.select(b.compare(x, b.splat_float(x.type, 0.0), "LT"), lower, upper);
}

// 1 / (1 + exp(-x)), the CPU's sigmoid spelling.
Value sigmoid(Builder& b, const Value& x) {
  Value one = k(b, x, 1.0);
  return b.divide(one, b.add(one, b.unary("exponential", b.negate(x))));
}

constexpr double kBeta = 0.79788456080286535588;     // sqrt(2/pi)
constexpr double kKappa = 0.044715;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2*pi)

TORCH_TPU_LOWERING("relu", [](Builder& b, const OpCall& c, const Values& v) {
  // x < 0 ? 0 : x keeps NaN, like clamp_min.
  if (operand(c, v, 0).type.dtype == DType::Pred)
    throw std::invalid_argument("Boolean inputs not supported for relu");
  Value x = to_type(b, operand(c, v, 0), c.outputs[0]);
  Value zero = b.splat_int(x.type, 0);
  return Values{b.select(b.compare(x, zero, "LT"), zero, x)};
});

// threshold_backward(grad, self, threshold): self <= threshold ? 0 : grad.
TORCH_TPU_LOWERING("threshold_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  Value g = to_type(b, operand(c, v, 0), out);
  Value x = to_type(b, operand(c, v, 1), out);
  Value t = to_type(b, operand(c, v, 2), out);
  return Values{b.select(b.compare(x, t, "LE"), b.splat_int(out, 0), g)};
});

TORCH_TPU_LOWERING("threshold", [](Builder& b, const OpCall& c, const Values& v) {
  // threshold(self, threshold, value): self <= threshold ? value : self.
  const auto& out = c.outputs[0];
  Value x = to_type(b, operand(c, v, 0), out);
  Value t = to_type(b, operand(c, v, 1), out);
  Value val = to_type(b, operand(c, v, 2), out);
  return Values{b.select(b.compare(x, t, "LE"), val, x)};
});

Value gelu(Builder& b, const Value& x, const std::string& approximate) {
  if (approximate == "tanh") {
    Value half = k(b, x, 0.5), one = k(b, x, 1.0);
    Value cube = b.multiply(b.multiply(x, x), x);
    Value inner = b.multiply(k(b, x, kBeta), b.add(x, b.multiply(k(b, x, kKappa), cube)));
    return b.multiply(b.multiply(half, x), b.add(one, b.unary("tanh", inner)));
  }
  return b.multiply(x, normal_cdf(b, x));
}

Value gelu_grad(Builder& b, const Value& x, const std::string& approximate) {
  if (approximate == "tanh") {
    Value half = k(b, x, 0.5), one = k(b, x, 1.0);
    Value sq = b.multiply(x, x);
    Value inner = b.multiply(k(b, x, kBeta), b.add(x, b.multiply(k(b, x, kKappa), b.multiply(sq, x))));
    Value t = b.unary("tanh", inner);
    Value left_d = b.multiply(half, b.add(one, t));
    Value right_d = b.multiply(b.multiply(half, x), b.subtract(one, b.multiply(t, t)));
    Value inner_d = b.multiply(k(b, x, kBeta), b.add(one, b.multiply(k(b, x, 3 * kKappa), sq)));
    return b.add(left_d, b.multiply(right_d, inner_d));
  }
  Value cdf = normal_cdf(b, x);
  Value pdf = b.multiply(k(b, x, kInvSqrt2Pi),
                         b.unary("exponential", b.multiply(k(b, x, -0.5), b.multiply(x, x))));
  return b.add(cdf, b.multiply(x, pdf));
}

const std::string& approximate_of(const OpCall& c, size_t i) {
  const std::string& a = c.arg(i).s;
  if (a != "none" && a != "tanh") throw std::invalid_argument(c.op + ": approximate must be 'none' or 'tanh'");
  return a;
}

TORCH_TPU_LOWERING("gelu", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  return Values{done(b, c, gelu(b, in(b, c, v, 0), approximate_of(c, 1)))};
});

TORCH_TPU_LOWERING("gelu_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), x = in(b, c, v, 1);
  return Values{done(b, c, b.multiply(g, gelu_grad(b, x, approximate_of(c, 2))))};
});

TORCH_TPU_LOWERING("silu", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value x = in(b, c, v, 0);
  Value one = k(b, x, 1.0);
  return Values{done(b, c, b.divide(x, b.add(one, b.unary("exponential", b.negate(x)))))};
});

TORCH_TPU_LOWERING("silu_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), x = in(b, c, v, 1);
  Value s = sigmoid(b, x);
  Value one = k(b, x, 1.0);
  // grad * s * (1 + x * (1 - s))
  Value d = b.multiply(s, b.add(one, b.multiply(x, b.subtract(one, s))));
  return Values{done(b, c, b.multiply(g, d))};
});

// --- piecewise activations. Scalars (bounds, slopes) are runtime operands. ---

Value lt(Builder& b, const Value& x, const Value& y) { return b.compare(x, y, "LT"); }
Value gt(Builder& b, const Value& x, const Value& y) { return b.compare(x, y, "GT"); }

// hardtanh(self, min_val, max_val): comparisons, not min/max, so NaN passes through.
TORCH_TPU_LOWERING("hardtanh", [](Builder& b, const OpCall& c, const Values& v) {
  Value x = in(b, c, v, 0), lo = in(b, c, v, 1), hi = in(b, c, v, 2);
  return Values{done(b, c, b.select(lt(b, x, lo), lo, b.select(gt(b, x, hi), hi, x)))};
});

TORCH_TPU_LOWERING("hardtanh_backward", [](Builder& b, const OpCall& c, const Values& v) {
  Value g = in(b, c, v, 0), x = in(b, c, v, 1), lo = in(b, c, v, 2), hi = in(b, c, v, 3);
  Value outside = b.binary("or", b.compare(x, lo, "LE"), b.compare(x, hi, "GE"));
  return Values{done(b, c, b.select(outside, k(b, g, 0.0), g))};
});

TORCH_TPU_LOWERING("leaky_relu", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value x = in(b, c, v, 0), slope = in(b, c, v, 1);
  return Values{done(b, c, b.select(gt(b, x, k(b, x, 0.0)), x, b.multiply(x, slope)))};
});

// leaky_relu_backward(grad, self, negative_slope, self_is_result)
TORCH_TPU_LOWERING("leaky_relu_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), x = in(b, c, v, 1), slope = in(b, c, v, 2);
  return Values{done(b, c, b.select(gt(b, x, k(b, x, 0.0)), g, b.multiply(g, slope)))};
});

// elu(self, alpha, scale, input_scale) = x > 0 ? scale * x : alpha * scale * expm1(x * input_scale)
TORCH_TPU_LOWERING("elu", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value x = in(b, c, v, 0), alpha = in(b, c, v, 1), scale = in(b, c, v, 2), in_scale = in(b, c, v, 3);
  Value neg = b.multiply(b.multiply(alpha, scale), b.unary("exponential_minus_one", b.multiply(x, in_scale)));
  return Values{done(b, c, b.select(gt(b, x, k(b, x, 0.0)), b.multiply(x, scale), neg))};
});

// elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result)
TORCH_TPU_LOWERING("elu_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), alpha = in(b, c, v, 1), scale = in(b, c, v, 2), in_scale = in(b, c, v, 3);
  Value x = in(b, c, v, 5);
  Value neg;
  if (c.arg(4).b) {  // x is the forward result: d = input_scale * (y + alpha * scale)
    neg = b.multiply(b.multiply(g, in_scale), b.add(x, b.multiply(alpha, scale)));
  } else {
    Value e = b.unary("exponential", b.multiply(x, in_scale));
    neg = b.multiply(b.multiply(g, in_scale), b.multiply(b.multiply(alpha, scale), e));
  }
  return Values{done(b, c, b.select(b.compare(x, k(b, x, 0.0), "LE"), neg, b.multiply(g, scale)))};
});

// softplus(self, beta, threshold) = x * beta > threshold ? x : log1p(exp(x * beta)) / beta
TORCH_TPU_LOWERING("softplus", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value x = in(b, c, v, 0), beta = in(b, c, v, 1), th = in(b, c, v, 2);
  Value xb = b.multiply(x, beta);
  Value soft = b.divide(b.unary("log_plus_one", b.unary("exponential", xb)), beta);
  return Values{done(b, c, b.select(gt(b, xb, th), x, soft))};
});

TORCH_TPU_LOWERING("softplus_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), x = in(b, c, v, 1), beta = in(b, c, v, 2), th = in(b, c, v, 3);
  Value xb = b.multiply(x, beta);
  Value z = b.unary("exponential", xb);
  Value soft = b.divide(b.multiply(g, z), b.add(z, k(b, z, 1.0)));
  return Values{done(b, c, b.select(gt(b, xb, th), g, soft))};
});

// relu6-style clamp of x + 3 to [0, 6], divided by 6.
Value hardsigmoid(Builder& b, const Value& x) {
  Value t = b.add(x, k(b, x, 3.0));
  Value zero = k(b, x, 0.0), six = k(b, x, 6.0);
  t = b.select(lt(b, t, zero), zero, b.select(gt(b, t, six), six, t));
  return b.divide(t, six);
}

TORCH_TPU_LOWERING("hardsigmoid", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  return Values{done(b, c, hardsigmoid(b, in(b, c, v, 0)))};
});

TORCH_TPU_LOWERING("hardsigmoid_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), x = in(b, c, v, 1);
  Value inside = b.binary("and", gt(b, x, k(b, x, -3.0)), lt(b, x, k(b, x, 3.0)));
  return Values{done(b, c, b.select(inside, b.divide(g, k(b, g, 6.0)), k(b, g, 0.0)))};
});

TORCH_TPU_LOWERING("hardswish", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value x = in(b, c, v, 0);
  return Values{done(b, c, b.multiply(x, hardsigmoid(b, x)))};
});

TORCH_TPU_LOWERING("hardswish_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), x = in(b, c, v, 1);
  Value mid = b.multiply(g, b.add(b.divide(x, k(b, x, 3.0)), k(b, x, 0.5)));
  Value r = b.select(lt(b, x, k(b, x, -3.0)), k(b, g, 0.0), b.select(b.compare(x, k(b, x, 3.0), "LE"), mid, g));
  return Values{done(b, c, r)};
});

// mish(x) = x * tanh(softplus(x))
TORCH_TPU_LOWERING("mish", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value x = in(b, c, v, 0);
  Value sp = b.unary("log_plus_one", b.unary("exponential", x));
  return Values{done(b, c, b.multiply(x, b.unary("tanh", sp)))};
});

TORCH_TPU_LOWERING("mish_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), x = in(b, c, v, 1);
  Value t = b.unary("tanh", b.unary("log_plus_one", b.unary("exponential", x)));
  Value one = k(b, x, 1.0);
  Value d = b.add(t, b.multiply(b.multiply(x, sigmoid(b, x)), b.subtract(one, b.multiply(t, t))));
  return Values{done(b, c, b.multiply(g, d))};
});

// log_sigmoid_forward(self) -> (min(x, 0) - log1p(exp(-|x|)), buffer). The
// buffer is a CPU-kernel scratch; our backward recomputes from x, so it is zeros.
TORCH_TPU_LOWERING("log_sigmoid_forward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value x = in(b, c, v, 0);
  Value zero = k(b, x, 0.0);
  Value r = b.subtract(b.minimum(x, zero), b.unary("log_plus_one", b.unary("exponential", b.negate(b.unary("abs", x)))));
  // min() would drop NaN: keep it like the CPU.
  r = b.select(b.compare(x, x, "NE"), x, r);
  const auto& buf = c.outputs[1];
  return Values{done(b, c, r), b.splat_float(buf, 0.0)};
});

// grad * (x < 0 ? 1 - e/(1+e) : e/(1+e)) with e = exp(-|x|), i.e. grad * sigmoid(-x).
TORCH_TPU_LOWERING("log_sigmoid_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), x = in(b, c, v, 1);
  Value e = b.unary("exponential", b.negate(b.unary("abs", x)));
  Value frac = b.divide(e, b.add(k(b, e, 1.0), e));
  Value neg = lt(b, x, k(b, x, 0.0));
  Value d = b.select(neg, b.subtract(k(b, x, 1.0), frac), frac);
  return Values{done(b, c, b.multiply(g, d))};
});

}  // namespace
}  // namespace torch_tpu::ops
