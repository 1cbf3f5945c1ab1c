// Determinants (_linalg_det, _linalg_slogdet) from the LU factorization:
// det = sign(P) * prod(diag(U)), of A^T for a contiguous real A as the CPU
// (factors_transpose, linalg/common.h; det(A^T) = det(A)).
#include "ops/linalg/common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

// (-1)^(number of rows swapped), as a (batch) value of dtype `t`.
Value permutation_sign(Builder& b, const Value& pivots, DType t) {
  int64_t r = pivots.type.rank();
  TensorType it(DType::I32, pivots.type.dims);
  Value moved = b.compare(pivots, b.add(b.iota(it, r - 1), b.splat_int(it, 1)), "NE");
  TensorType st(t, pivots.type.dims);
  Value sign = b.select(moved, b.splat_float(st, -1.0), b.splat_float(st, 1.0));
  return b.reduce({sign}, {b.constant_float(t, 1.0)}, {r - 1},
                  [](Builder& rb, const Values& a) { return Values{rb.multiply(a[0], a[1])}; })[0];
}

Value product(Builder& b, const Value& x) {
  int64_t r = x.type.rank();
  return b.reduce({x}, {b.constant_float(x.type.dtype, 1.0)}, {r - 1},
                  [](Builder& rb, const Values& a) { return Values{rb.multiply(a[0], a[1])}; })[0];
}

TORCH_TPU_ACCEPTS_COMPLEX("_linalg_det", "_linalg_slogdet");

TORCH_TPU_LOWERING("_linalg_det", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& a = operand(c, v, 0);
  require_lapack_dtype(c, a.type.dtype);
  bool transpose = factors_transpose(c, 0, a.type.dtype);
  const TensorType &dt = c.outputs[0], &lt = c.outputs[1], &pt = c.outputs[2];
  if (numel(a.type) == 0) return Values{b.splat_float(dt, 1.0), b.splat_float(lt, 0.0), b.splat_int(pt, 0)};
  PackedLU f = lu_factor_packed(b, transpose ? mT(b, a) : a);
  Value det = b.multiply(permutation_sign(b, f.pivots, a.type.dtype), product(b, diagonal(b, f.lu)));
  return Values{b.reshape(det, dt.dims), f.lu, f.pivots};
});

// sign = sign(P) * prod(sgn(diag(U))) (0 for a singular A), logabsdet = sum(log |diag(U)|).
// (The CPU's sign of a real A is +-1 or 0 in A's dtype; logabsdet is real.)
TORCH_TPU_LOWERING("_linalg_slogdet", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& a = operand(c, v, 0);
  require_lapack_dtype(c, a.type.dtype);
  bool transpose = factors_transpose(c, 0, a.type.dtype);
  const TensorType &st = c.outputs[0], &lt = c.outputs[1], &lut = c.outputs[2], &pt = c.outputs[3];
  if (numel(a.type) == 0)
    return Values{b.splat_float(st, 1.0), b.splat_float(lt, 0.0), b.splat_float(lut, 0.0), b.splat_int(pt, 0)};
  PackedLU f = lu_factor_packed(b, transpose ? mT(b, a) : a);
  Value d = diagonal(b, f.lu);
  Value mag = magnitude(b, d);
  Value zero = b.splat_float(mag.type, 0.0);
  // sgn: d / |d| (0 where d is 0) for complex d; for real d the CPU's sign,
  // (d > 0) - (d < 0): 1 for +inf, 0 for NaN.
  Value unit;
  if (hlo::is_complex(d.type.dtype)) {
    unit = b.select(b.compare(mag, zero, "EQ"), b.splat_float(d.type, 0.0), b.divide(d, b.complex(mag, zero)));
  } else {
    Value z = b.splat_float(d.type, 0.0), one = b.splat_float(d.type, 1.0);
    unit = b.subtract(b.select(b.compare(d, z, "GT"), one, z), b.select(b.compare(d, z, "LT"), one, z));
  }
  Value sign = b.multiply(permutation_sign(b, f.pivots, a.type.dtype), product(b, unit));
  Value logabs = b.reduce({b.unary("log", mag)}, {b.constant_float(mag.type.dtype, 0.0)}, {mag.type.rank() - 1},
                          [](Builder& rb, const Values& x) { return Values{rb.add(x[0], x[1])}; })[0];
  return Values{b.reshape(sign, st.dims), b.reshape(logabs, lt.dims), f.lu, f.pivots};
});

}  // namespace
}  // namespace torch_tpu::ops
