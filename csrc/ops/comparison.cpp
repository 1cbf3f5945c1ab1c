// Comparisons, logical and bitwise ops, and the float classification
// predicates (isnan, isinf, ...). Comparisons run in the promoted dtype of
// both operands (torch.result_type), so an int tensor compared with 2.5 is
// compared as float; NaN compares like IEEE (only `ne` is true).
#include <limits>

#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// The CPU kernels reject float inputs to bitwise ops with NotImplementedError
// naming the kernel and the promoted dtype.
void reject_float(DType t, const char* kernel) {
  if (hlo::is_float(t) || hlo::is_complex(t)) not_implemented_for(kernel, t);
}

Values compare(Builder& b, const OpCall& c, const Values& v, const char* direction) {
  const TensorType& out = c.outputs[0];
  DType common = result_type(c, {0, 1});
  Value x = lift(b, c, v, 0, common, common, out.dims);
  Value y = lift(b, c, v, 1, common, common, out.dims);
  return Values{b.convert(b.compare(x, y, direction), out.dtype)};
}

// Equality compares complex values whole; ordering comparisons reject them in the meta kernel.
TORCH_TPU_ACCEPTS_COMPLEX("eq.Tensor", "eq.Scalar", "ne.Tensor", "ne.Scalar");

#define TORCH_TPU_COMPARISON(name, dir)                                                                        \
  TORCH_TPU_LOWERING(name ".Tensor", [](Builder& b, const OpCall& c, const Values& v) { return compare(b, c, v, dir); }); \
  TORCH_TPU_LOWERING(name ".Scalar", [](Builder& b, const OpCall& c, const Values& v) { return compare(b, c, v, dir); })
TORCH_TPU_COMPARISON("eq", "EQ");
TORCH_TPU_COMPARISON("ne", "NE");
TORCH_TPU_COMPARISON("lt", "LT");
TORCH_TPU_COMPARISON("le", "LE");
TORCH_TPU_COMPARISON("gt", "GT");
TORCH_TPU_COMPARISON("ge", "GE");
#undef TORCH_TPU_COMPARISON

// --- logical: operands are truth values (x != 0) ---------------------------

Value truth(Builder& b, const OpCall& c, const Values& v, size_t i, const std::vector<int64_t>& dims) {
  return b.broadcast_to(b.convert(operand(c, v, i), DType::Pred), dims);
}

Values logical(Builder& b, const OpCall& c, const Values& v, const char* op) {
  const TensorType& out = c.outputs[0];
  return Values{b.convert(b.binary(op, truth(b, c, v, 0, out.dims), truth(b, c, v, 1, out.dims)), out.dtype)};
}
TORCH_TPU_ACCEPTS_COMPLEX("logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf");

TORCH_TPU_LOWERING("logical_and", [](Builder& b, const OpCall& c, const Values& v) { return logical(b, c, v, "and"); });
TORCH_TPU_LOWERING("logical_or", [](Builder& b, const OpCall& c, const Values& v) { return logical(b, c, v, "or"); });
TORCH_TPU_LOWERING("logical_xor", [](Builder& b, const OpCall& c, const Values& v) { return logical(b, c, v, "xor"); });
TORCH_TPU_LOWERING("logical_not", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  return Values{b.convert(logical_not(b, truth(b, c, v, 0, out.dims)), out.dtype)};
});

// --- bitwise: ints and bools only -------------------------------------------

Values bitwise(Builder& b, const OpCall& c, const Values& v, const char* op, const char* kernel) {
  const TensorType& out = c.outputs[0];
  reject_float(out.dtype, kernel);
  Value x = lift(b, c, v, 0, out.dtype, out.dtype, out.dims);
  Value y = lift(b, c, v, 1, out.dtype, out.dtype, out.dims);
  return Values{b.binary(op, x, y)};
}
#define TORCH_TPU_BITWISE(name, op)                                                                  \
  TORCH_TPU_LOWERING(name ".Tensor", [](Builder& b, const OpCall& c, const Values& v) {             \
    return bitwise(b, c, v, op, name "_cpu");                                                        \
  });                                                                                                \
  TORCH_TPU_LOWERING(name ".Scalar", [](Builder& b, const OpCall& c, const Values& v) {             \
    return bitwise(b, c, v, op, name "_cpu");                                                        \
  })
TORCH_TPU_BITWISE("bitwise_and", "and");
TORCH_TPU_BITWISE("bitwise_or", "or");
TORCH_TPU_BITWISE("bitwise_xor", "xor");
#undef TORCH_TPU_BITWISE

TORCH_TPU_LOWERING("bitwise_not", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  reject_float(out.dtype, "bitwise_not_cpu");
  return Values{b.unary("not", to_type(b, operand(c, v, 0), out))};
});

// --- float classification ---------------------------------------------------

// pred(x) for floats (of either part for complex: isnan/isinf); integers and
// bools are always finite.
Values classify(Builder& b, const OpCall& c, const Values& v, Value (*pred)(Builder&, const Value&)) {
  const TensorType& out = c.outputs[0];
  const Value& x = operand(c, v, 0);
  if (hlo::is_complex(x.type.dtype))
    return Values{b.convert(logical_or(b, pred(b, b.real(x)), pred(b, b.imag(x))), out.dtype)};
  if (!hlo::is_float(x.type.dtype)) return Values{b.splat_int(out, 0)};
  return Values{b.convert(pred(b, x), out.dtype)};
}

Value inf_like(Builder& b, const Value& x, double sign) {
  return full_like(b, x, sign * std::numeric_limits<double>::infinity());
}

TORCH_TPU_LOWERING("isnan", [](Builder& b, const OpCall& c, const Values& v) { return classify(b, c, v, is_nan); });
TORCH_TPU_LOWERING("isinf", [](Builder& b, const OpCall& c, const Values& v) {
  return classify(b, c, v, [](Builder& b, const Value& x) { return b.compare(b.unary("abs", x), inf_like(b, x, 1), "EQ"); });
});
TORCH_TPU_LOWERING("isposinf", [](Builder& b, const OpCall& c, const Values& v) {
  return classify(b, c, v, [](Builder& b, const Value& x) { return b.compare(x, inf_like(b, x, 1), "EQ"); });
});
TORCH_TPU_LOWERING("isneginf", [](Builder& b, const OpCall& c, const Values& v) {
  return classify(b, c, v, [](Builder& b, const Value& x) { return b.compare(x, inf_like(b, x, -1), "EQ"); });
});

// signbit: the sign bit of floats (so -0 and -NaN are set), x < 0 for integers.
TORCH_TPU_LOWERING("signbit", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& x = operand(c, v, 0);
  if (x.type.dtype == DType::Pred) return Values{b.splat_int(out, 0)};
  if (!hlo::is_float(x.type.dtype)) return Values{b.compare(x, b.splat_int(x.type, 0), "LT")};
  bool wide = x.type.dtype == DType::F64;
  Value w = b.convert(x, wide ? DType::F64 : DType::F32);  // exact widening keeps the sign
  Value i = b.bitcast_convert(w, x.type.with_dtype(wide ? DType::I64 : DType::I32));
  return Values{b.compare(i, b.splat_int(i.type, 0), "LT")};
});

}  // namespace
}  // namespace torch_tpu::ops
