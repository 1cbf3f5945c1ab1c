// Cholesky factorization (linalg_cholesky_ex, cholesky) and the ops built on
// the factor (_cholesky_solve_helper, cholesky_inverse), as stablehlo.cholesky
// and stablehlo.triangular_solve. Only the lower triangle of the input is read,
// like LAPACK's potrf with uplo = 'L'; upper = true returns L^H (L^T for real
// input). Complex input is Hermitian positive-definite: A = L L^H.
#include <stdexcept>

#include "ops/linalg/common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

// LAPACK's info: 0 on success, else k + 1 for the first diagonal entry k of L
// that is not positive (a NaN included: it marks where the factorization failed).
Value cholesky_info(Builder& b, const Value& l, const TensorType& info_type) {
  const auto& dims = l.type.dims;
  int64_t r = l.type.rank(), n = dims[r - 1];
  std::vector<int64_t> batch = batch_of(l.type);
  if (n == 0) return b.splat_int(info_type, 0);
  // diag[..., j] = sum over i of L[..., i, j] where i == j.
  TensorType it(DType::I64, dims);
  Value eye = b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "EQ");
  Value masked = b.select(eye, l, b.splat_float(l.type, 0.0));
  std::vector<int64_t> rdim = {r - 2};
  Value diag = b.reduce({masked}, {b.constant_float(l.type.dtype, 0.0)}, rdim,
                        [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
  // bad[j]: j + 1 where !(diag > 0), else n + 1; info = min over j, n + 1 -> 0.
  Value re = b.real(diag);  // a complex factor's diagonal is real
  Value good = b.compare(re, b.splat_float(re.type, 0.0), "GT");
  TensorType jt(DType::I64, diag.type.dims);
  Value idx = b.add(b.iota(jt, r - 2), b.splat_int(jt, 1));
  Value bad = b.select(good, b.splat_int(jt, n + 1), idx);
  Value first = b.reduce({bad}, {b.constant_int(DType::I64, n + 1)}, {r - 2},
                         [](Builder& rb, const Values& a) { return Values{rb.minimum(a[0], a[1])}; })[0];
  TensorType ft(DType::I64, batch);
  Value info = b.select(b.compare(first, b.splat_int(ft, n + 1), "EQ"), b.splat_int(ft, 0), first);
  return b.convert(info, info_type.dtype);
}

// L (or L^H when upper) of the symmetric positive-definite `a`.
Value factor(Builder& b, const Value& a, bool upper) {
  if (numel(a.type) == 0) return a;
  Value l = cholesky_lower(b, a);
  return upper ? mH(b, l) : l;
}

TORCH_TPU_ACCEPTS_COMPLEX("linalg_cholesky_ex", "cholesky", "_cholesky_solve_helper", "cholesky_inverse");

TORCH_TPU_LOWERING("linalg_cholesky_ex", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& a = operand(c, v, 0);
  require_lapack_dtype(c, a.type.dtype);
  bool upper = c.arg(1).b, check_errors = c.arg(2).b;
  Value l = numel(a.type) == 0 ? a : cholesky_lower(b, a);
  Value info = cholesky_info(b, l, c.outputs[1]);
  if (check_errors) {
    Value zero = b.splat_int(info.type, 0);
    Value failed = b.reduce({b.compare(info, zero, "NE")}, {b.constant_bool(false)},
                            [&] {
                              std::vector<int64_t> all;
                              for (int64_t i = 0; i < info.type.rank(); ++i) all.push_back(i);
                              return all;
                            }(),
                            [](Builder& rb, const Values& x) { return Values{rb.binary("or", x[0], x[1])}; })[0];
    add_runtime_check(failed, CheckKind::Runtime,
                      "linalg.cholesky: The factorization could not be completed because the input is not "
                      "positive-definite.");
  }
  return Values{upper && numel(a.type) ? mH(b, l) : l, info};
});

// The deprecated torch.cholesky (upper defaults to false); no info output.
TORCH_TPU_LOWERING("cholesky", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& a = operand(c, v, 0);
  require_lapack_dtype(c, a.type.dtype);
  return Values{factor(b, a, c.arg(1).b)};
});

// Solves A X = B given A's factor (lower L: L L^H; upper U: U^H U). The inputs
// arrive already broadcast to a common batch shape (cholesky_solve does it).
TORCH_TPU_LOWERING("_cholesky_solve_helper", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& rhs = operand(c, v, 0);
  const Value& f = operand(c, v, 1);
  // Both are (batches of) matrices; the CPU's first look at a 0-d/1-d one is its dim -2.
  for (const Value* m : {&rhs, &f}) wrap_dim(-2, m->type.rank());
  require_lapack_dtype(c, rhs.type.dtype);
  bool upper = c.arg(2).b;
  const TensorType& out = c.outputs[0];
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0)};
  Value a = broadcast_batch(b, f, batch_of(out)), x = broadcast_batch(b, rhs, batch_of(out));
  // lower: L y = b, then L^H x = y.  upper: U^H y = b, then U x = y.
  Value y = triangular_solve(b, a, x, true, !upper, false, upper ? OpA::Adjoint : OpA::None);
  return Values{triangular_solve(b, a, y, true, !upper, false, upper ? OpA::None : OpA::Adjoint)};
});

// inv(L L^H) (or inv(U^H U)): the two triangular systems against I.
TORCH_TPU_LOWERING("cholesky_inverse", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& f = operand(c, v, 0);
  require_lapack_dtype(c, f.type.dtype);
  bool upper = c.arg(1).b;
  const TensorType& out = c.outputs[0];
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0)};
  int64_t r = out.rank();
  TensorType it(DType::I64, out.dims);
  Value eye = b.select(b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "EQ"), b.splat_float(out, 1.0),
                       b.splat_float(out, 0.0));
  // Solve A X = I through the two triangular systems, as _cholesky_solve_helper.
  Value y = triangular_solve(b, f, eye, true, !upper, false, upper ? OpA::Adjoint : OpA::None);
  return Values{triangular_solve(b, f, y, true, !upper, false, upper ? OpA::None : OpA::Adjoint)};
});

}  // namespace
}  // namespace torch_tpu::ops
