// Activation functions and their backward ops. Half types compute in f32 like
// the CPU kernels; formulas follow the CPU kernels so results agree to rounding.
#include <cmath>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/lowering_error.h"
#include "ops/philox_uniform.h"
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
    not_implemented_for(c.op.substr(0, c.op.find('.')), t.dtype);  // NotImplementedError, as the CPU
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

// x <= threshold, compared as the CPU kernel does: half types in float (a
// threshold past their range, or between two of their values, must not round
// first: threshold(65504, 65520) keeps 65504 in float16, not 65520 -> inf).
Value at_or_below_threshold(Builder& b, const OpCall& c, const Values& v, size_t x_index, size_t t_index) {
  const auto& out = c.outputs[0];
  bool half = out.dtype == DType::F16 || out.dtype == DType::BF16;
  TensorType cmp = half ? out.with_dtype(DType::F32) : out;
  return b.compare(to_type(b, operand(c, v, x_index), cmp), to_type(b, operand(c, v, t_index), cmp), "LE");
}

// threshold_backward(grad, self, threshold): self <= threshold ? 0 : grad.
TORCH_TPU_LOWERING("threshold_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  Value g = to_type(b, operand(c, v, 0), out);
  return Values{b.select(at_or_below_threshold(b, c, v, 1, 2), b.splat_int(out, 0), g)};
});

TORCH_TPU_LOWERING("threshold", [](Builder& b, const OpCall& c, const Values& v) {
  // threshold(self, threshold, value): self <= threshold ? value : self.
  const auto& out = c.outputs[0];
  Value x = to_type(b, operand(c, v, 0), out);
  Value val = to_type(b, operand(c, v, 2), out);
  return Values{b.select(at_or_below_threshold(b, c, v, 0, 1), val, x)};
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

// hardtanh(self, min_val, max_val): comparisons, not min/max, so NaN passes
// through; the lower bound first, then the upper, so min_val > max_val gives
// max_val everywhere, as the CPU's clamp does. A NaN bound makes every
// element NaN, as there.
TORCH_TPU_LOWERING("hardtanh", [](Builder& b, const OpCall& c, const Values& v) {
  Value x = in(b, c, v, 0), lo = in(b, c, v, 1), hi = in(b, c, v, 2);
  Value above_lo = b.select(lt(b, x, lo), lo, x);
  Value r = b.select(gt(b, above_lo, hi), hi, above_lo);
  r = b.select(b.compare(lo, lo, "NE"), lo, r);
  return Values{done(b, c, b.select(b.compare(hi, hi, "NE"), hi, r))};
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

// elu(self, alpha, scale, input_scale) = x < 0 ? alpha * scale * expm1(x * input_scale) : scale * x
TORCH_TPU_LOWERING("elu", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value x = in(b, c, v, 0), alpha = in(b, c, v, 1), scale = in(b, c, v, 2), in_scale = in(b, c, v, 3);
  Value neg = b.multiply(b.multiply(alpha, scale), b.unary("exponential_minus_one", b.multiply(x, in_scale)));
  // ±0 takes the positive side, as on the CPU: with alpha or input_scale inf
  // or NaN the negative side's 0 * inf would be NaN there.
  return Values{done(b, c, b.select(lt(b, x, k(b, x, 0.0)), neg, b.multiply(x, scale)))};
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
  // The CPU's boundaries: 0 at x <= -3, the slope below 3, the gradient itself from 3 on.
  Value r = b.select(b.compare(x, k(b, x, -3.0), "LE"), k(b, g, 0.0), b.select(lt(b, x, k(b, x, 3.0)), mid, g));
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

// --- shrinkage, glu, prelu, rrelu ---

// |x| <= lambd, the zeroed band of hardshrink/softshrink (false for NaN).
Value in_band(Builder& b, const Value& x, const Value& l) {
  return b.binary("and", b.compare(x, b.negate(l), "GE"), b.compare(x, l, "LE"));
}

// hardshrink's and shrink_backward's lambd: the CPU kernels take it in the
// tensor's own dtype (lambd.to<scalar_t>()), so a half type's band ends at
// the rounded value (bfloat16 lambd 65520 zeroes 65536).
Value lambd_in_dtype(Builder& b, const OpCall& c, const Values& v, size_t i) {
  Value l = in(b, c, v, i);
  if (!hlo::is_float(c.outputs[0].dtype)) return l;  // (integers: no CPU kernel to follow)
  return b.convert(b.convert(l, c.outputs[0].dtype), l.type.dtype);
}

TORCH_TPU_LOWERING("hardshrink", [](Builder& b, const OpCall& c, const Values& v) {
  Value x = in(b, c, v, 0), l = lambd_in_dtype(b, c, v, 1);
  return Values{done(b, c, b.select(in_band(b, x, l), k(b, x, 0.0), x))};
});

// hardshrink_backward(grad_out, self, lambd); softshrink_backward has the same form.
Values shrink_backward(Builder& b, const OpCall& c, const Values& v) {
  if (c.outputs[0].dtype == DType::Pred) not_implemented_for("shrink_backward_cpu", DType::Pred);  // as the CPU (XLA: a compile error)
  Value g = in(b, c, v, 0), x = in(b, c, v, 1), l = lambd_in_dtype(b, c, v, 2);
  return Values{done(b, c, b.select(in_band(b, x, l), k(b, g, 0.0), g))};
}
TORCH_TPU_LOWERING("hardshrink_backward", shrink_backward);
TORCH_TPU_LOWERING("softshrink_backward", shrink_backward);

// x > l ? x - l : (x < -l ? x + l : x * 0), the CPU's spelling (NaN stays NaN).
TORCH_TPU_LOWERING("softshrink", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value x = in(b, c, v, 0), l = in(b, c, v, 1);
  Value mid = b.select(lt(b, x, b.negate(l)), b.add(x, l), b.multiply(x, k(b, x, 0.0)));
  return Values{done(b, c, b.select(gt(b, x, l), b.subtract(x, l), mid))};
});

// The two halves of `x` along `dim`.
std::pair<Value, Value> halves(Builder& b, const OpCall& c, const Value& x, int64_t dim) {
  int64_t rank = x.type.rank();
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) throw std::invalid_argument(c.op + ": dim out of range");
  std::vector<int64_t> start(rank, 0), limit = x.type.dims, strides(rank, 1);
  int64_t h = x.type.dims[dim] / 2;
  limit[dim] = h;
  Value a = b.slice(x, start, limit, strides);
  start[dim] = h;
  limit[dim] = 2 * h;
  return {a, b.slice(x, start, limit, strides)};
}

// glu(self, dim) = a * sigmoid(b) for the halves a, b of self.
TORCH_TPU_LOWERING("glu", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  const Value& self = operand(c, v, 0);
  Value x = b.convert(self, compute_type(self.type.dtype));
  auto [lo, hi] = halves(b, c, x, c.arg(1).i);
  return Values{done(b, c, b.multiply(lo, sigmoid(b, hi)))};
});

// glu_backward(grad_output, self, dim): [g * s, g * a * s * (1 - s)] with s = sigmoid(b).
TORCH_TPU_LOWERING("glu_backward", [](Builder& b, const OpCall& c, const Values& v) {
  // The CPU's first step, sigmoid_out into a buffer of the input's dtype, refuses integers (RuntimeError).
  if (!hlo::is_float(c.outputs[0].dtype) && !hlo::is_complex(c.outputs[0].dtype))
    throw std::invalid_argument(std::string("result type Float can't be cast to the desired output type ") +
                                torch_dtype_name(c.outputs[0].dtype));
  require_float(c, c.outputs[0]);
  const Value& self = operand(c, v, 1);
  DType ct = compute_type(self.type.dtype);
  Value x = b.convert(self, ct), g = b.convert(operand(c, v, 0), ct);
  int64_t dim = wrap_dim(c.arg(2).i, x.type.rank());
  auto [lo, hi] = halves(b, c, x, dim);
  // The CPU stores sigmoid(b) in the input's dtype before using it.
  Value s = b.convert(b.convert(sigmoid(b, hi), self.type.dtype), ct);
  Value ga = b.multiply(g, s);
  Value gb = b.multiply(b.multiply(ga, lo), b.subtract(k(b, s, 1.0), s));
  return Values{done(b, c, b.concatenate({ga, gb}, dim))};
});

// _prelu_kernel(self, weight): weight broadcasts against self.
TORCH_TPU_LOWERING("_prelu_kernel", [](Builder& b, const OpCall& c, const Values& v) {
  Value x = in(b, c, v, 0), w = in(b, c, v, 1);
  return Values{done(b, c, b.select(gt(b, x, k(b, x, 0.0)), x, b.multiply(w, x)))};
});

// _prelu_kernel_backward(grad, self, weight) -> (x > 0 ? g : w * g, x > 0 ? 0 : x * g), both
// in the broadcast shape (autograd sums the weight's down to its shape).
TORCH_TPU_LOWERING("_prelu_kernel_backward", [](Builder& b, const OpCall& c, const Values& v) {
  TensorType t = compute_of(c.outputs[0]);
  Value g = to_type(b, operand(c, v, 0), t), x = to_type(b, operand(c, v, 1), t), w = to_type(b, operand(c, v, 2), t);
  Value pos = gt(b, x, k(b, x, 0.0));
  Value gx = b.select(pos, g, b.multiply(w, g));
  Value gw = b.select(pos, k(b, g, 0.0), b.multiply(x, g));
  return Values{b.convert(gx, c.outputs[0].dtype), b.reshape(b.convert(gw, c.outputs[1].dtype), c.outputs[1].dims)};
});

// rrelu's eval slope (lower + upper) / 2, which the CPU takes in double: in
// float32 it is halved first so lower + upper cannot overflow (3e38, 3.3e38);
// the barrier stops XLA from factoring lo/2 + hi/2 back into (lo + hi) / 2.
Value eval_slope(Builder& b, const Value& lo, const Value& hi) {
  Value half = k(b, lo, 0.5);
  if (lo.type.dtype == DType::F64) return b.multiply(b.add(lo, hi), half);
  return b.add(b.opaque(b.multiply(lo, half)), b.multiply(hi, half));
}

// rrelu_with_noise(self, noise(b!), lower, upper, training, generator): in eval, a leaky relu
// with slope (lower + upper) / 2 and noise untouched; in training, like the CPU,
// each x <= 0 takes a slope r ~ U(lower, upper) (kept in noise), others x (noise 1).
// Returns (output, noise).
std::pair<Value, Value> rrelu(Builder& b, const OpCall& c, const Values& v, const TensorType& out,
                              const TensorType& noise_t) {
  require_float(c, out);
  TensorType t = compute_of(out);
  Value x = to_type(b, operand(c, v, 0), t);
  Value lo = to_type(b, operand(c, v, 2), t), hi = to_type(b, operand(c, v, 3), t);
  if (noise_t.dims != out.dims)  // the CPU's check, in eval mode too
    throw std::invalid_argument("noise tensor shape must match self tensor shape. Got self.shape = " +
                                hlo::int_list(out.dims) + " noise.shape = " + hlo::int_list(noise_t.dims));
  if (!c.arg(4).b) {
    Value slope = eval_slope(b, lo, hi);
    return {b.convert(b.select(gt(b, x, k(b, x, 0.0)), x, b.multiply(x, slope)), out.dtype), operand(c, v, 1)};
  }
  Value u = b.convert(philox_uniform(b, c, v, 5, out.dims, t.dtype == DType::F64 ? DType::F64 : DType::F32), t.dtype);
  Value r = b.add(lo, b.multiply(b.subtract(hi, lo), u));
  Value neg = b.compare(x, k(b, x, 0.0), "LE");
  Value y = b.select(neg, b.multiply(x, r), x);
  Value noise = b.select(neg, r, k(b, x, 1.0));
  return {b.convert(y, out.dtype), b.convert(noise, noise_t.dtype)};
}
// Results: the written noise, then the output.
TORCH_TPU_LOWERING("rrelu_with_noise", [](Builder& b, const OpCall& c, const Values& v) {
  auto [y, noise] = rrelu(b, c, v, c.outputs[1], c.outputs[0]);
  return Values{noise, y};
});
// The in-place form writes self and noise, in that order.
TORCH_TPU_LOWERING("rrelu_with_noise_", [](Builder& b, const OpCall& c, const Values& v) {
  auto [y, noise] = rrelu(b, c, v, c.outputs[0], c.outputs[1]);
  return Values{y, noise};
});

// rrelu_with_noise_backward(grad, self, noise, lower, upper, training, self_is_result)
TORCH_TPU_LOWERING("rrelu_with_noise_backward", [](Builder& b, const OpCall& c, const Values& v) {
  require_float(c, c.outputs[0]);
  Value g = in(b, c, v, 0), x = in(b, c, v, 1);
  if (c.arg(5).b) return Values{done(b, c, b.multiply(g, in(b, c, v, 2)))};  // training: the drawn slopes
  Value slope = eval_slope(b, in(b, c, v, 3), in(b, c, v, 4));
  return Values{done(b, c, b.select(gt(b, x, k(b, x, 0.0)), g, b.multiply(g, slope)))};
});

}  // namespace
}  // namespace torch_tpu::ops
