// Triangular solves (linalg_solve_triangular, triangular_solve) as
// stablehlo.triangular_solve, after broadcasting A and B to the result's batch
// dims (the op takes equal batch dims). Only A's named triangle is read.
#include "ops/linalg/common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

// A (`coef`, square) broadcast to the batch dims of the result `out`.
Value coefficient(Builder& b, const Value& coef, const TensorType& out) {
  return broadcast_batch(b, b.convert(coef, out.dtype), batch_of(out));
}

TORCH_TPU_ACCEPTS_COMPLEX("linalg_solve_triangular", "triangular_solve");

TORCH_TPU_LOWERING("linalg_solve_triangular", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  require_lapack_dtype(c, out.dtype);
  bool upper = c.arg(2).b, left = c.arg(3).b, unit = c.arg(4).b;
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0)};
  Value a = coefficient(b, operand(c, v, 0), out);
  Value rhs = broadcast_batch(b, b.convert(operand(c, v, 1), out.dtype), batch_of(out));
  return Values{triangular_solve(b, a, rhs, left, !upper, unit, OpA::None)};
});

// The older form: self is B, A is the coefficient; returns (X, A broadcast).
TORCH_TPU_LOWERING("triangular_solve", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const TensorType& coef_out = c.outputs[1];
  require_lapack_dtype(c, out.dtype);
  bool upper = c.arg(2).b, transpose = c.arg(3).b, unit = c.arg(4).b;
  Value a = coefficient(b, operand(c, v, 1), coef_out);
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0), a};
  Value rhs = broadcast_batch(b, b.convert(operand(c, v, 0), out.dtype), batch_of(out));
  // transpose is A^T, not A^H, for complex A too (LAPACK's trtrs with 'T').
  Value x = triangular_solve(b, broadcast_batch(b, a, batch_of(out)), rhs, true, !upper, unit,
                             transpose ? OpA::Transpose : OpA::None);
  return Values{x, a};
});

}  // namespace
}  // namespace torch_tpu::ops
