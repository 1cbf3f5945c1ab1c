#include "eager/portable_scalars.h"

#include <c10/core/DefaultDtype.h>
#include <c10/util/complex.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "eager/dtype_map.h"
#include "ops/number_precision.h"

namespace torch_tpu::eager {

namespace {

bool wide(c10::ScalarType t) { return t == c10::kDouble || t == c10::kComplexDouble; }

bool exact_in_f32(double v) { return std::isnan(v) || static_cast<double>(static_cast<float>(v)) == v; }

// The CPU computes these in double whatever the output type (arange,
// linspace and logspace accumulate their steps in double): their rules take
// the scalars as given and convert them into their own compute types.
bool computes_in_double(const std::string& op) {
  return op.rfind("arange", 0) == 0 || op.rfind("linspace", 0) == 0 || op.rfind("logspace", 0) == 0;
}

// arange(start, end, step) into a float32-or-narrower tensor counts in f32
// (the CPU counts in double and rounds once: the same values wherever start
// and step are exact in f32 and the counts stay under 2^24, within a rounding
// or two elsewhere). The length comes from the host's meta kernel, in double.
// An integer result counts in int64 from start.to<int64_t>() and
// step.to<int64_t>() (the CPU's accumulate type), converted here the same way.
void narrow_arange(ParsedCall& p) {
  Invocation& inv = p.inv;
  if (inv.targets.size() != 1) return;
  c10::ScalarType out = inv.targets[0].scalar_type();
  if (wide(out)) return;  // (complex64 results take their ends as complex<float>)
  bool integral = !c10::isFloatingType(out);
  for (RuntimeScalar& s : inv.scalars)
    if (s.dtype == hlo::DType::F64)
      s = integral ? scalar_for_target(c10::Scalar(s.as<double>()), c10::kLong)
                   : runtime_scalar_as(c10::Scalar(s.as<double>()), hlo::DType::F32);
}

// linspace and logspace take start and end as start.to<result type>() on the
// CPU: the host converts them the same way, so no f64 reaches a program for
// float32-or-narrower or integer results.
void narrow_range_ends(ParsedCall& p) {
  Invocation& inv = p.inv;
  if (inv.targets.size() != 1 || inv.scalars.size() < 2) return;
  c10::ScalarType out = inv.targets[0].scalar_type();
  if (wide(out)) return;  // (complex64 results take their ends as complex<float>)
  // A one-step logspace fills base ** start with start as a double (f32 here).
  bool one_step = inv.op == "logspace.out" && p.args.size() > 2 && p.args[2].i == 1;
  bool no_steps = p.args.size() > 2 && p.args[2].i == 0;  // the CPU converts nothing (linspace(inf, 0, 0))
  if (one_step) out = c10::kFloat;
  for (int k = 0; k < 2; ++k) {
    RuntimeScalar& s = inv.scalars[k];
    if (no_steps) {
      s = scalar_for_target(c10::Scalar(0), out);
      continue;
    }
    if (s.dtype == hlo::DType::F64) s = scalar_for_target(c10::Scalar(s.as<double>()), out);
    else if (s.dtype == hlo::DType::I64) s = scalar_for_target(c10::Scalar(s.as<int64_t>()), out);
    else if (s.dtype == hlo::DType::C128) s = scalar_for_target(c10::Scalar(s.as<c10::complex<double>>()), out);
  }
}

// TORCH_TPU_DEBUG_WIDE_SCALARS=1 turns narrowing off, so a test can show
// the TPU type check catching the f64 scalars it would leave.
bool narrowing_off() {
  static const bool off = [] {
    const char* v = std::getenv("TORCH_TPU_DEBUG_WIDE_SCALARS");
    return v && *v && std::string(v) != "0";
  }();
  return off;
}

// Python numbers in calls outside the range factories.
void narrow_numbers(ParsedCall& p) {
  Invocation& inv = p.inv;
  // (The default dtype needs no look: where it decides a result's type, an
  // f64 result keeps the number wide through NarrowIfFloatResults.)
  ops::NumberContext c;
  for (const auto* ts : {&inv.inputs, &inv.targets})
    for (const at::Tensor& t : *ts) c.see_tensor(to_hlo(t.scalar_type(), inv.op.c_str()));
  for (const ops::Arg& a : p.args)
    if (a.kind == ops::Arg::Kind::DType) c.see_dtype_arg(a.dtype);
  if (c.wide) return;
  for (size_t k = 0; k < p.scalar_of_operand.size(); ++k) {
    int si = p.scalar_of_operand[k];
    if (si < 0 || si >= static_cast<int>(inv.scalars.size())) continue;  // generator operands
    // Only Python numbers: a 0-d CPU tensor's dtype is the user's, and rules
    // read it (promotion, heaviside's same-dtype check).
    if (!p.operand_is_number[k]) continue;
    RuntimeScalar& s = inv.scalars[si];
    if (s.dtype == hlo::DType::F64) {
      double v = s.as<double>();
      ops::NumberWidth w = ops::number_width(c, exact_in_f32(v));
      if (w == ops::NumberWidth::Narrow) s = runtime_scalar_as(c10::Scalar(v), hlo::DType::F32);
      else if (w == ops::NumberWidth::NarrowIfFloatResults) s.f32_if_float_results = true;
    } else if (s.dtype == hlo::DType::C128) {
      auto v = s.as<c10::complex<double>>();
      if (ops::number_width(c, exact_in_f32(v.real()) && exact_in_f32(v.imag())) == ops::NumberWidth::Narrow)
        s = runtime_scalar_as(c10::Scalar(v), hlo::DType::C64);
    }
  }
}

}  // namespace

void narrow_scalars_for_tpu(ParsedCall& p) {
  Invocation& inv = p.inv;
  if (inv.scalars.empty() || narrowing_off()) return;
  // Every op but the range factories (arange, linspace, logspace) narrows
  // its numbers; their first letter rules them out without comparing names.
  if (inv.op[0] != 'a' && inv.op[0] != 'l') return narrow_numbers(p);
  if (inv.op == "arange.start_out") narrow_arange(p);
  else if (inv.op == "linspace.out" || inv.op == "logspace.out") narrow_range_ends(p);
  else if (!computes_in_double(inv.op)) narrow_numbers(p);
}

RuntimeScalar scalar_for_target(const c10::Scalar& value, c10::ScalarType target) {
  switch (target) {
    case c10::kDouble: return runtime_scalar_as(value, hlo::DType::F64);
    case c10::kComplexDouble: return runtime_scalar_as(value, hlo::DType::C128);
    case c10::kComplexFloat:
    case c10::kComplexHalf: return runtime_scalar_as(c10::Scalar(value.to<c10::complex<float>>()), hlo::DType::C64);
    case c10::kBool: return runtime_scalar_as(c10::Scalar(value.to<bool>()), hlo::DType::Pred);
    default: break;
  }
  // The CPU's value.to<scalar_t>(): half types round through float, and
  // integers truncate, raising when the value does not fit.
  // (A half-type value is exact in float.)
  if (target == c10::kHalf) return runtime_scalar_as(c10::Scalar(static_cast<float>(value.to<c10::Half>())), hlo::DType::F32);
  if (target == c10::kBFloat16)
    return runtime_scalar_as(c10::Scalar(static_cast<float>(value.to<c10::BFloat16>())), hlo::DType::F32);
  if (c10::isFloatingType(target)) return runtime_scalar_as(c10::Scalar(value.to<float>()), hlo::DType::F32);
  int64_t v = 0;
  switch (target) {
    case c10::kByte: v = value.to<uint8_t>(); break;
    case c10::kChar: v = value.to<int8_t>(); break;
    case c10::kShort: v = value.to<int16_t>(); break;
    case c10::kInt: v = value.to<int32_t>(); break;
    case c10::kUInt16: v = value.to<uint16_t>(); break;
    case c10::kUInt32: v = value.to<uint32_t>(); break;
    case c10::kUInt64: v = static_cast<int64_t>(value.to<uint64_t>()); break;  // the bits: converts back exactly
    default: v = value.to<int64_t>(); break;
  }
  return runtime_scalar_as(c10::Scalar(v), hlo::DType::I64);
}

}  // namespace torch_tpu::eager
