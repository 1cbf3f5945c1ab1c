// Small helpers shared by lowering rules.
#pragma once

#include <limits>
#include <stdexcept>
#include <string>

#include "hlo/builder.h"
#include "ops/lowering_error.h"
#include "ops/op_call.h"

namespace torch_tpu::ops {

// The names every rule file uses.
using hlo::Builder;
using hlo::DType;
using hlo::TensorType;
using hlo::Value;
using Values = std::vector<hlo::Value>;

// `v` converted to `type`'s dtype and broadcast to its shape (PyTorch's
// implicit promotion + broadcasting of an operand into a result).
// A dimension argument wrapped into [0, rank) (0-d tensors take 0 and -1, as
// in PyTorch); out of range it raises the CPU's IndexError, so a bad `dim` is
// an error, never a read past the shape.
inline int64_t wrap_dim(int64_t d, int64_t rank) {
  int64_t r = rank == 0 ? 1 : rank;
  if (d < -r || d >= r)
    throw std::out_of_range("Dimension out of range (expected to be in range of [" + std::to_string(-r) + ", " +
                            std::to_string(r - 1) + "], but got " + std::to_string(d) + ")");
  return d < 0 ? d + r : d;
}

// The CPU's check of mode/median/nanmedian/kthvalue along a dim: the dim must
// have elements (IndexError, naming the wrapped dim). Returns the wrapped dim.
inline int64_t nonempty_reduction_dim(const char* op, const hlo::TensorType& t, int64_t d) {
  int64_t dim = wrap_dim(d, t.rank());
  if (t.rank() > 0 && t.dims[dim] == 0)
    throw std::out_of_range(std::string(op) + "(): Expected reduction dim " + std::to_string(dim) +
                            " to have non-zero size.");
  return dim;
}

inline hlo::Value to_type(hlo::Builder& b, const hlo::Value& v, const hlo::TensorType& type) {
  return b.broadcast_to(b.convert(v, type.dtype), type.dims);
}

// The operand value of tensor/scalar argument `i`.
inline const hlo::Value& operand(const OpCall& c, const std::vector<hlo::Value>& ops, size_t i) {
  return ops.at(c.arg(i).operand());
}

// The operand value of optional tensor argument `i`; nullptr for None.
inline const hlo::Value* optional_operand(const OpCall& c, const std::vector<hlo::Value>& ops, size_t i) {
  return c.arg(i).is_none() ? nullptr : &operand(c, ops, i);
}

// The precision_config attribute of a dot or convolution on `dtype`
// operands: float32 follows torch.set_float32_matmul_precision, float64
// and complex always ask for full precision.
inline std::string precision_config(MatmulPrecision precision, DType dtype) {
  const char* p = "HIGHEST";
  if (dtype == DType::F32 && precision == MatmulPrecision::High) p = "HIGH";
  if (dtype == DType::F32 && precision == MatmulPrecision::Medium) p = "DEFAULT";
  return std::string(", precision_config = [#stablehlo<precision ") + p + ">, #stablehlo<precision " + p + ">]";
}

// |x|: real for complex x. StableHLO's abs of a complex is its magnitude,
// but the CPU plugin's build loses a NaN imaginary part (|1 + nan i| = 1.41,
// |0 + nan i| = 0, |nan + inf i| = nan); the CPU's std::abs is C99 hypot:
// inf when either part is infinite, else NaN when either is NaN.
inline Value magnitude(hlo::Builder& b, const Value& x) {
  if (!hlo::is_complex(x.type.dtype)) return b.unary("abs", x);
  Value m = b.emit1("abs", {x}, "", x.type.with_dtype(hlo::complex_component(x.type.dtype)));
  Value re = b.unary("abs", b.real(x)), im = b.unary("abs", b.imag(x));
  Value inf = b.splat_float(m.type, std::numeric_limits<double>::infinity());
  Value any_inf = b.binary("or", b.compare(re, inf, "EQ"), b.compare(im, inf, "EQ"));
  Value any_nan = b.binary("or", b.compare(re, re, "NE"), b.compare(im, im, "NE"));
  return b.select(any_inf, inf, b.select(any_nan, b.splat_float(m.type, std::numeric_limits<double>::quiet_NaN()), m));
}

// `x` kept a rounded value of its own: XLA's CPU backend contracts a multiply
// feeding an add into one fma (LLVM's FP-op fusion, which no option turns
// off), skipping the product's rounding where the CPU's loop rounds it. An
// identity select between the two (NaN where x is NaN, else x; a complex NaN
// becomes NaN + 0i) stops the contraction. Integers are returned as they are.
inline Value keep_rounded(hlo::Builder& b, const Value& x) {
  if (!hlo::is_float(x.type.dtype) && !hlo::is_complex(x.type.dtype)) return x;
  return b.select(b.compare(x, x, "NE"), b.splat_float(x.type, std::numeric_limits<double>::quiet_NaN()), x);
}

}  // namespace torch_tpu::ops
