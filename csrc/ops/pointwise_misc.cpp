// Fused pointwise ops optimizers and activations use (lerp, addcmul, addcdiv)
// and the backward ops autograd calls for sigmoid, tanh and logit. Each
// follows the CPU kernel's formula and evaluation order in the compute dtype.
// The CPU's f32/f64 vector kernels fuse a*b+c into an fma; emulating that needs
// f64 (slow or absent on TPUs), so those results may differ by 1 ulp.
#include <cmath>

#include "ops/complex/complex_math.h"
#include "ops/elementwise_common.h"
#include "ops/registry.h"
#include "ops/torch_dtype_name.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

struct Lifted {
  DType out, ct;
  std::vector<Value> x;  // the listed arguments in the compute dtype, broadcast
};

// Scalar-schema arguments (lerp's weight, addcmul's value) go straight to the
// compute dtype, as the CPU kernels read them. A complex Scalar for a real
// result: the CPU's value.to<scalar_t>() refuses a nonzero imaginary part (a
// runtime operand here, so checked at run time).
Lifted lift_all(Builder& b, const OpCall& c, const Values& v, std::initializer_list<size_t> args) {
  const TensorType& out = c.outputs[0];
  Lifted l{out.dtype, compute_type(out.dtype), {}};
  for (size_t i : args)
    if (c.arg(i).kind == Arg::Kind::Scalar && hlo::is_complex(operand(c, v, i).type.dtype) && !hlo::is_complex(out.dtype))
      runtime_check(b, b.compare(b.imag(operand(c, v, i)), b.splat_float(b.imag(operand(c, v, i)).type, 0), "NE"),
                    std::string("value cannot be converted to type ") + cpp_type_name(out.dtype) + " without overflow");
  for (size_t i : args)
    l.x.push_back(c.arg(i).kind == Arg::Kind::Scalar ? lift_scalar(b, c, v, i, out.dtype, l.ct, out.dims)
                                                      : lift(b, c, v, i, out.dtype, l.ct, out.dims));
  return l;
}

// lerp(self, end, w): self + w * (end - self) for |w| < 0.5, else
// end - (end - self) * (1 - w), which is exact at w == 1.
// The CPU kernels take float and complex values only.
Values lerp(Builder& b, const OpCall& c, const Values& v, const char* kernel) {
  if (!hlo::is_float(c.outputs[0].dtype) && !hlo::is_complex(c.outputs[0].dtype))
    not_implemented_for(kernel, c.outputs[0].dtype);
  Lifted l = lift_all(b, c, v, {0, 1, 2});
  const Value &self = l.x[0], &end = l.x[1], &w = l.x[2];
  Value diff = b.subtract(end, self);
  Value mag = magnitude(b, w);
  Value small = b.compare(mag, full_like(b, mag, 0.5), "LT");
  Value near_self = b.add(self, b.multiply(w, diff));
  Value near_end = b.subtract(end, b.multiply(diff, b.subtract(full_like(b, w, 1), w)));
  return Values{b.convert(b.select(small, near_self, near_end), l.out)};
}
TORCH_TPU_ACCEPTS_COMPLEX("lerp.Scalar", "lerp.Tensor", "addcmul", "addcdiv");

TORCH_TPU_LOWERING("lerp.Scalar", [](Builder& b, const OpCall& c, const Values& v) {
  return lerp(b, c, v, "lerp_kernel_scalar");
});
TORCH_TPU_LOWERING("lerp.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  return lerp(b, c, v, "lerp_kernel_tensor");
});

// addcmul(self, t1, t2, value) = self + value * t1 * t2
TORCH_TPU_LOWERING("addcmul", [](Builder& b, const OpCall& c, const Values& v) {
  Lifted l = lift_all(b, c, v, {0, 1, 2, 3});
  Value prod = b.multiply(b.multiply(l.x[3], l.x[1]), l.x[2]);
  return Values{b.convert(l.ct == DType::Pred ? b.binary("or", l.x[0], prod) : b.add(l.x[0], prod), l.out)};
});

// addcdiv(self, t1, t2, value) = self + value * t1 / t2 (in that order, like
// the CPU); integer inputs are rejected by the meta kernel. Complex values
// divide as the CPU's c10::complex (1 / (inf + inf j) is NaN, XLA's gives 0).
TORCH_TPU_LOWERING("addcdiv", [](Builder& b, const OpCall& c, const Values& v) {
  Lifted l = lift_all(b, c, v, {0, 1, 2, 3});
  Value num = b.multiply(l.x[3], l.x[1]);
  Value q = hlo::is_complex(l.ct) ? complex_math::divide(b, num, l.x[2]) : b.divide(num, l.x[2]);
  return Values{b.convert(b.add(l.x[0], q), l.out)};
});

// sigmoid_backward(grad, y) = grad * (1 - y) * y
TORCH_TPU_LOWERING("sigmoid_backward", [](Builder& b, const OpCall& c, const Values& v) {
  reject_dtype(c, c.outputs[0].dtype == DType::Pred, "sigmoid_backward_cpu");
  Lifted l = lift_all(b, c, v, {0, 1});
  const Value &g = l.x[0], &y = l.x[1];
  return Values{b.convert(b.multiply(b.multiply(g, b.subtract(full_like(b, y, 1), y)), y), l.out)};
});

// tanh_backward(grad, y) = grad * (1 - y * y)
TORCH_TPU_LOWERING("tanh_backward", [](Builder& b, const OpCall& c, const Values& v) {
  reject_dtype(c, c.outputs[0].dtype == DType::Pred, "tanh_backward_cpu");
  Lifted l = lift_all(b, c, v, {0, 1});
  const Value &g = l.x[0], &y = l.x[1];
  return Values{b.convert(b.multiply(g, b.subtract(full_like(b, y, 1), b.multiply(y, y))), l.out)};
});

// logit_backward(grad, x, eps): grad / (x * (1 - x)) inside the domain; with
// eps, 0 outside [eps, 1 - eps]; without, NaN outside [0, 1]. At x = 0 or 1,
// grad * inf, the CPU's per-element branch: grad / (-0.0 * 1) would flip the
// sign at x = -0.0 (the CPU's SIMD blocks do flip it; its scalar path does not).
TORCH_TPU_LOWERING("logit_backward", [](Builder& b, const OpCall& c, const Values& v) {
  reject_dtype(c, !hlo::is_float(c.outputs[0].dtype), "logit_backward_cpu");
  Lifted l = lift_all(b, c, v, {0, 1});
  const Value &g = l.x[0], &x = l.x[1];
  bool has_eps = !c.arg(2).is_none() && c.arg(2).d >= 0;
  double lo = has_eps ? c.arg(2).d : 0, hi = 1 - lo;
  Value one = full_like(b, x, 1);
  // Each operation rounds to the half type, as the CPU's Half arithmetic.
  auto rnd = [&](const Value& t) { return l.ct == l.out ? t : b.convert(b.convert(t, l.out), l.ct); };
  Value r = b.divide(g, rnd(b.multiply(x, rnd(b.subtract(one, x)))));
  if (is_float(l.ct)) {  // integer dtypes (no CPU kernel) have no inf
    Value edge = logical_or(b, b.compare(x, zeros_like(b, x), "EQ"), b.compare(x, one, "EQ"));
    r = b.select(edge, b.multiply(g, full_like(b, g, INFINITY)), r);
  }
  Value lo_v = full_like(b, x, lo), hi_v = full_like(b, x, hi);
  if (has_eps && is_float(l.out)) {
    // lo and hi are the CPU's scalar_t values: eps rounded to the dtype (via
    // float, as c10::Half's constructor), hi = 1 - lo in the compute dtype,
    // rounded to it (1 - 1e-5 is 1 in float16: x = 1 is inside, grad * inf).
    Value e = b.constant_float(l.out == DType::F64 ? DType::F64 : DType::F32, lo);
    Value lo_s = b.convert(b.convert(e, l.out), l.ct);
    Value hi_s = b.convert(b.convert(b.subtract(b.constant_float(l.ct, 1), lo_s), l.out), l.ct);
    lo_v = b.broadcast_to(lo_s, x.type.dims);
    hi_v = b.broadcast_to(hi_s, x.type.dims);
  }
  Value outside = logical_or(b, b.compare(x, lo_v, "LT"), b.compare(x, hi_v, "GT"));
  Value fill = has_eps ? zeros_like(b, x) : full_like(b, x, std::nan(""));
  return Values{b.convert(b.select(outside, fill, r), l.out)};
});

}  // namespace
}  // namespace torch_tpu::ops
