// Tensor factories whose values are computed on the device.
#include <limits>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// arange.start_out(start, end, step, *, out): out[i] = start + i * step.
// start and step are runtime operands; the length comes from the meta kernel,
// so a new start with the same length reuses the program. The values are
// counted over the flat out= (which may be [n, 1]: the CPU keeps its shape).
TORCH_TPU_LOWERING("arange.start_out", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  // Integer start and step count exactly in int64 (the CPU's int64 for an
  // integer result; a float result from integer arguments is exact too);
  // float ones in f32 for float32-or-narrower results (the CPU's double,
  // rounded once, where the counts are exact in f32; eager/portable_scalars.cpp).
  DType s0 = operand(c, v, 0).type.dtype, s2 = operand(c, v, 2).type.dtype;
  DType acc = !hlo::is_float(out.dtype) || (!hlo::is_float(s0) && !hlo::is_float(s2)) ? DType::I64
              : out.dtype == DType::F64                                                ? DType::F64
                                                                                       : DType::F32;
  hlo::TensorType t(acc, {out.numel()});
  Value i = b.iota(t, 0);
  Value start = to_type(b, operand(c, v, 0), t);
  Value step = to_type(b, operand(c, v, 2), t);
  return Values{b.reshape(b.convert(b.add(start, b.multiply(i, step)), out.dtype), out.dims)};
});

// trunc(base + num / den) for integers (den > 0), exactly: with q, r the
// truncating quotient and remainder of num / den, base + q moves one toward
// zero when the dropped fraction r / den points the other way.
Value trunc_add_ratio(Builder& b, const Value& base, const Value& num, int64_t den) {
  const TensorType& t = num.type;
  Value d = b.splat_int(t, den), zero = b.splat_int(t, 0), one = b.splat_int(t, 1);
  Value q = b.divide(num, d);
  Value r = b.subtract(num, b.multiply(q, d));
  Value sum = b.add(base, q);
  Value up = b.binary("and", b.compare(r, zero, "GT"), b.compare(sum, zero, "LT"));
  Value down = b.binary("and", b.compare(r, zero, "LT"), b.compare(sum, zero, "GT"));
  return b.subtract(b.add(sum, b.convert(up, t.dtype)), b.convert(down, t.dtype));
}

// linspace into an integer tensor: start + (end - start) i / (steps - 1),
// truncated, computed exactly in int64 (the first half up from start, the
// second down from end, as the CPU). The CPU computes it in double, and its
// contiguous kernel adds the double step to a truncated vector base, so its
// values depend on the vector width; exact integers have no f64 (a TPU lacks
// it) and no such drift. Ranges whose products overflow int64 raise.
Value linspace_integral(Builder& b, const OpCall& c, const Values& v, int64_t steps) {
  const auto& out = c.outputs[0];
  TensorType tt(DType::I64, {out.numel()});
  // start and end as the CPU takes them (Scalar.to<out dtype>), then int64.
  Value s0 = b.convert(b.convert(operand(c, v, 0), out.dtype), DType::I64);
  Value e0 = b.convert(b.convert(operand(c, v, 1), out.dtype), DType::I64);
  Value span0 = b.subtract(e0, s0);
  Value s = b.broadcast_to(s0, tt.dims), e = b.broadcast_to(e0, tt.dims), span = b.broadcast_to(span0, tt.dims);
  int64_t den = steps - 1;
  // |end - start| * (steps - 1) must fit in int64.
  int64_t bound = std::numeric_limits<int64_t>::max() / den;
  Value wrapped = b.compare(b.binary("and", b.binary("xor", e0, s0), b.binary("xor", e0, span0)),
                            b.constant_int(DType::I64, 0), "LT");
  Value too_big = b.binary("or", b.compare(span0, b.constant_int(DType::I64, bound), "GT"),
                           b.compare(span0, b.constant_int(DType::I64, -bound), "LT"));
  add_runtime_check(b.binary("or", wrapped, too_big), CheckKind::Runtime,
                    "linspace: end - start times steps - 1 overflows int64 for an integer result on tpu");
  Value i = b.iota(tt, 0);
  Value up = trunc_add_ratio(b, s, b.multiply(span, i), den);
  Value down = trunc_add_ratio(b, e, b.negate(b.multiply(span, b.subtract(b.splat_int(tt, den), i))), den);
  Value first_half = b.compare(i, b.splat_int(tt, steps / 2), "LT");
  return b.reshape(b.convert(b.select(first_half, up, down), out.dtype), out.dims);
}

// linspace.out(Scalar start, Scalar end, int steps, *, out): like the CPU
// kernel, the first half counts up from start and the second half down from
// end, in the result's compute type (integers above).
TORCH_TPU_LOWERING("linspace.out", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  int64_t steps = c.arg(2).i;
  Value start = b.convert(operand(c, v, 0), out.dtype);
  if (out.numel() == 0 || steps == 1) return Values{b.broadcast_to(start, out.dims)};
  if (!hlo::is_float(out.dtype) && !hlo::is_complex(out.dtype)) return Values{linspace_integral(b, c, v, steps)};
  DType t = compute_type(out.dtype);
  hlo::TensorType tt(t, {out.numel()});
  hlo::TensorType index_type(hlo::complex_component(t), {out.numel()});  // a complex result counts in its parts' type
  Value s = to_type(b, start, tt);
  Value e = to_type(b, b.convert(operand(c, v, 1), out.dtype), tt);
  Value step = b.divide(b.subtract(e, s), b.splat_int(tt, steps - 1));
  Value index = b.iota(index_type, 0), i = b.convert(index, t);
  Value up = b.add(s, b.multiply(step, i));
  Value down = b.subtract(e, b.multiply(step, b.subtract(b.splat_int(tt, steps - 1), i)));
  Value first_half = b.compare(index, b.splat_int(index_type, steps / 2), "LT");
  return Values{b.reshape(b.convert(b.select(first_half, up, down), out.dtype), out.dims)};
});

// eye.out(int n, *, out) and eye.m_out(int n, int m, *, out): ones where row == column.
Values eye(Builder& b, const OpCall& c) {
  const auto& out = c.outputs[0];
  hlo::TensorType idx(DType::I64, out.dims);
  if (out.numel() == 0) return Values{b.splat_int(out, 0)};
  return Values{b.convert(b.compare(b.iota(idx, 0), b.iota(idx, 1), "EQ"), out.dtype)};
}

TORCH_TPU_ACCEPTS_COMPLEX("eye.out", "eye.m_out", "linspace.out");

TORCH_TPU_LOWERING("eye.out", [](Builder& b, const OpCall& c, const Values&) { return eye(b, c); });
TORCH_TPU_LOWERING("eye.m_out", [](Builder& b, const OpCall& c, const Values&) { return eye(b, c); });

}  // namespace
}  // namespace torch_tpu::ops
