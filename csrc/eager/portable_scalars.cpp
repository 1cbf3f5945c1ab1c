#include "eager/portable_scalars.h"

#include <c10/core/DefaultDtype.h>
#include <c10/util/complex.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "eager/dtype_map.h"

namespace torch_tpu::eager {

namespace {

bool wide(c10::ScalarType t) { return t == c10::kDouble || t == c10::kComplexDouble; }
bool wide(hlo::DType t) { return t == hlo::DType::F64 || t == hlo::DType::C128; }
bool floating(hlo::DType t) { return hlo::is_float(t) || hlo::is_complex(t); }

template <typename T>
T read(const RuntimeScalar& s) {
  T v;
  std::memcpy(&v, s.bytes.data(), sizeof(T));
  return v;
}

bool exact_in_f32(double v) { return std::isnan(v) || static_cast<double>(static_cast<float>(v)) == v; }

// The CPU computes these in double whatever the output type (arange,
// linspace and logspace accumulate their steps in double): their rules keep
// the f64 scalars unless f32 computes the same values (see arange below).
bool computes_in_double(const std::string& op) {
  return op.rfind("arange", 0) == 0 || op.rfind("linspace", 0) == 0 || op.rfind("logspace", 0) == 0;
}

// arange(start, end, step) into a float32-or-narrower tensor counts in f32
// exactly when start and step are multiples of one power of two 2^-k and
// every value start + i * step (and i * step) stays under 2^24 * 2^-k: then
// each is an f32 with an exact product and sum, the CPU's double result.
bool arange_exact_in_f32(double start, double end, double step) {
  double bound = 2 * (std::max(std::fabs(start), std::fabs(end)) + std::fabs(step));
  for (int k = 0; k <= 40; ++k) {
    double scale = std::ldexp(1.0, k);
    if (bound * scale >= 16777216.0) return false;
    if (std::trunc(start * scale) == start * scale && std::trunc(step * scale) == step * scale) return true;
  }
  return false;
}

void narrow_arange(ParsedCall& p) {
  Invocation& inv = p.inv;
  if (inv.op != "arange.start_out" || inv.targets.size() != 1 || inv.scalars.size() != 3) return;
  c10::ScalarType out = inv.targets[0].scalar_type();
  if (!c10::isFloatingType(out) || wide(out)) return;
  double v[3];
  for (int i = 0; i < 3; ++i) {
    const RuntimeScalar& s = inv.scalars[i];
    if (s.dtype == hlo::DType::F64) v[i] = read<double>(s);
    else if (s.dtype == hlo::DType::I64) v[i] = static_cast<double>(read<int64_t>(s));
    else return;
  }
  if (!arange_exact_in_f32(v[0], v[1], v[2])) return;
  for (RuntimeScalar& s : inv.scalars)
    if (s.dtype == hlo::DType::F64) s = runtime_scalar_as(c10::Scalar(read<double>(s)), hlo::DType::F32);
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

}  // namespace

void narrow_scalars_for_tpu(ParsedCall& p) {
  Invocation& inv = p.inv;
  if (inv.scalars.empty() || narrowing_off()) return;
  if (computes_in_double(inv.op)) return narrow_arange(p);
  if (wide(c10::typeMetaToScalarType(c10::get_default_dtype()))) return;
  bool float_tensor = false, integral_dtype_arg = false;
  for (const auto* ts : {&inv.inputs, &inv.targets})
    for (const at::Tensor& t : *ts) {
      if (wide(t.scalar_type())) return;
      float_tensor |= c10::isFloatingType(t.scalar_type()) || c10::isComplexType(t.scalar_type());
    }
  for (const ops::Arg& a : p.args)
    if (a.kind == ops::Arg::Kind::DType) {
      if (wide(a.dtype)) return;
      float_tensor |= floating(a.dtype);
      integral_dtype_arg |= !floating(a.dtype);
    }
  // A float tensor sets a float compute type (a Python float never raises a
  // float tensor's type), unless the call converts into an integral dtype.
  bool float_work = float_tensor && !integral_dtype_arg;
  for (size_t k = 0; k < p.scalar_of_operand.size(); ++k) {
    int si = p.scalar_of_operand[k];
    if (si < 0 || si >= static_cast<int>(inv.scalars.size())) continue;  // generator operands
    // Only Python numbers: a 0-d CPU tensor's dtype is the user's, and rules
    // read it (promotion, heaviside's same-dtype check).
    if (!p.operand_is_number[k]) continue;
    RuntimeScalar& s = inv.scalars[si];
    if (s.dtype == hlo::DType::F64) {
      double v = read<double>(s);
      if (float_work || exact_in_f32(v)) s = runtime_scalar_as(c10::Scalar(v), hlo::DType::F32);
      else if (!float_tensor) s.f32_if_float_results = true;
    } else if (s.dtype == hlo::DType::C128) {
      auto v = read<c10::complex<double>>(s);
      if (float_work || (exact_in_f32(v.real()) && exact_in_f32(v.imag())))
        s = runtime_scalar_as(c10::Scalar(v), hlo::DType::C64);
    }
  }
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
