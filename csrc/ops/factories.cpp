// Tensor factories whose values are computed on the device.
#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// arange.start_out(start, end, step, *, out): out[i] = start + i * step.
// start and step are runtime operands; the length comes from the meta kernel,
// so a new start with the same length reuses the program. The values are
// counted over the flat out= (which may be [n, 1]: the CPU keeps its shape).
TORCH_TPU_LOWERING("arange.start_out", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  // Accumulate like the CPU kernel (double / int64), then round once. Integer
  // start and step count exactly in int64; f32 ones arrive only when every
  // value is exact in f32 (eager/portable_scalars.cpp), so f32 is exact too.
  DType s0 = operand(c, v, 0).type.dtype, s2 = operand(c, v, 2).type.dtype;
  DType acc = !hlo::is_float(out.dtype) || (!hlo::is_float(s0) && !hlo::is_float(s2)) ? DType::I64
              : s0 == DType::F64 || s2 == DType::F64                                   ? DType::F64
                                                                                       : DType::F32;
  hlo::TensorType t(acc, {out.numel()});
  Value i = b.iota(t, 0);
  Value start = to_type(b, operand(c, v, 0), t);
  Value step = to_type(b, operand(c, v, 2), t);
  return Values{b.reshape(b.convert(b.add(start, b.multiply(i, step)), out.dtype), out.dims)};
});

// linspace.out(Scalar start, Scalar end, int steps, *, out): like the CPU
// kernel, the first half counts up from start and the second half down from
// end, in the result type (double for integer results), truncated at the end.
TORCH_TPU_LOWERING("linspace.out", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];
  int64_t steps = c.arg(2).i;
  Value start = b.convert(operand(c, v, 0), out.dtype);
  if (out.numel() == 0 || steps == 1) return Values{b.broadcast_to(start, out.dims)};
  DType t = hlo::is_float(out.dtype) ? compute_type(out.dtype) : DType::F64;
  hlo::TensorType tt(t, {out.numel()});
  Value s = to_type(b, start, tt);
  Value e = to_type(b, b.convert(operand(c, v, 1), out.dtype), tt);
  Value step = b.divide(b.subtract(e, s), b.splat_int(tt, steps - 1));
  Value i = b.iota(tt, 0);
  Value up = b.add(s, b.multiply(step, i));
  Value down = b.subtract(e, b.multiply(step, b.subtract(b.splat_int(tt, steps - 1), i)));
  Value first_half = b.compare(i, b.splat_int(tt, steps / 2), "LT");
  return Values{b.reshape(b.convert(b.select(first_half, up, down), out.dtype), out.dims)};
});

// eye.out(int n, *, out) and eye.m_out(int n, int m, *, out): ones where row == column.
Values eye(Builder& b, const OpCall& c) {
  const auto& out = c.outputs[0];
  hlo::TensorType idx(DType::I64, out.dims);
  if (out.numel() == 0) return Values{b.splat_int(out, 0)};
  return Values{b.convert(b.compare(b.iota(idx, 0), b.iota(idx, 1), "EQ"), out.dtype)};
}

TORCH_TPU_LOWERING("eye.out", [](Builder& b, const OpCall& c, const Values&) { return eye(b, c); });
TORCH_TPU_LOWERING("eye.m_out", [](Builder& b, const OpCall& c, const Values&) { return eye(b, c); });

}  // namespace
}  // namespace torch_tpu::ops
