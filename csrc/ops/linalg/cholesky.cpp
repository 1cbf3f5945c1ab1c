// Cholesky factorization (linalg_cholesky_ex, cholesky) and the ops built on
// the factor (_cholesky_solve_helper, cholesky_inverse), as stablehlo.cholesky
// and stablehlo.triangular_solve. One triangle of the input is read, like
// LAPACK's potrf: the lower one, or the upper one for upper = true, which
// returns U = L^H (L^T for real input). Complex input is Hermitian
// positive-definite: A = L L^H.
#include <stdexcept>

#include "ops/linalg/common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

// LAPACK's info from a diagonal (batch, n): k + 1 for the first entry k where
// `bad` holds, 0 where none does; in `info_type` (i32).
Value first_bad_entry(Builder& b, const Value& bad, const TensorType& info_type) {
  int64_t r = bad.type.rank(), n = bad.type.dims[r - 1];
  TensorType jt(DType::I64, bad.type.dims);
  Value idx = b.add(b.iota(jt, r - 1), b.splat_int(jt, 1));
  Value marked = b.select(bad, idx, b.splat_int(jt, n + 1));
  Value first = b.reduce({marked}, {b.constant_int(DType::I64, n + 1)}, {r - 1},
                         [](Builder& rb, const Values& a) { return Values{rb.minimum(a[0], a[1])}; })[0];
  TensorType ft(DType::I64, info_type.dims);
  Value info = b.select(b.compare(first, b.splat_int(ft, n + 1), "EQ"), b.splat_int(ft, 0), first);
  return b.convert(info, info_type.dtype);
}

// Per matrix: true where the factor `l` failed (a diagonal entry that is not
// positive: XLA's cholesky fills a failed factor with NaN).
Value factor_failed(Builder& b, const Value& l) {
  Value re = b.real(diagonal(b, l));  // a complex factor's diagonal is real
  Value bad = b.unary("not", b.compare(re, b.splat_float(re.type, 0.0), "GT"));
  return b.reduce({bad}, {b.constant_bool(false)}, {bad.type.rank() - 1},
                  [](Builder& rb, const Values& x) { return Values{rb.binary("or", x[0], x[1])}; })[0];
}

// potrf's info for `a` and its factor `l`: 0 where the factorization
// succeeded, else the order k of the first leading minor that is not
// positive-definite. A failed factor is all NaN, so k is found by bisection:
// the leading k x k block of `a` (the identity beyond it) factors or not,
// ceil(log2 n) more factorizations, which run (stablehlo.if) only when some
// matrix failed.
Value cholesky_info(Builder& b, const Value& a, const Value& l, const TensorType& info_type) {
  int64_t r = a.type.rank(), n = a.type.dims[r - 1];
  if (numel(a.type) == 0) return b.splat_int(info_type, 0);
  Value failed = factor_failed(b, l);
  std::vector<int64_t> all;
  for (int64_t d = 0; d < failed.type.rank(); ++d) all.push_back(d);
  Value any = all.empty() ? failed
                          : b.reduce({failed}, {b.constant_bool(false)}, all, [](Builder& rb, const Values& x) {
                              return Values{rb.binary("or", x[0], x[1])};
                            })[0];
  auto bisect = [&](Builder& ib, const Values&) {
    TensorType bt(DType::I64, failed.type.dims), it(DType::I64, a.type.dims);
    std::vector<int64_t> keep;
    for (int64_t d = 0; d < r - 2; ++d) keep.push_back(d);
    Value row = ib.iota(it, r - 2), col = ib.iota(it, r - 1);
    Value eye = ib.select(ib.compare(row, col, "EQ"), ib.splat_float(a.type, 1.0), ib.splat_float(a.type, 0.0));
    Value lo = ib.splat_int(bt, 1), hi = ib.splat_int(bt, n);  // the answer lies in [lo, hi]
    for (int64_t span = n - 1; span > 0; span /= 2) {
      Value mid = ib.divide(ib.add(lo, hi), ib.splat_int(bt, 2));
      Value m = ib.broadcast_in_dim(mid, a.type.dims, keep);
      Value inside = ib.binary("and", ib.compare(row, m, "LT"), ib.compare(col, m, "LT"));
      Value bad = factor_failed(ib, cholesky_lower(ib, ib.select(inside, a, eye)));
      hi = ib.select(bad, mid, hi);
      lo = ib.select(bad, lo, ib.add(mid, ib.splat_int(bt, 1)));
    }
    return Values{ib.convert(ib.select(failed, lo, ib.splat_int(bt, 0)), info_type.dtype)};
  };
  auto none = [&](Builder& ib, const Values&) { return Values{ib.splat_int(info_type, 0)}; };
  return b.emit("if", {any}, "", {info_type}, {{{}, bisect}, {{}, none}})[0];
}

// The matrix whose lower triangle is factored: `a`, or for upper = true a^H,
// so that the upper triangle is the one read, as LAPACK's potrf with uplo = 'U'
// (the two differ only for input that is not Hermitian).
Value read_triangle(Builder& b, const Value& a, bool upper) { return upper ? mH(b, a) : a; }

TORCH_TPU_ACCEPTS_COMPLEX("linalg_cholesky_ex", "cholesky", "_cholesky_solve_helper", "cholesky_inverse");

TORCH_TPU_LOWERING("linalg_cholesky_ex", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& a = operand(c, v, 0);
  require_lapack_dtype(c, a.type.dtype);
  bool upper = c.arg(1).b, check_errors = c.arg(2).b;
  if (numel(a.type) == 0) return Values{a, b.splat_int(c.outputs[1], 0)};
  Value src = read_triangle(b, a, upper);
  Value l = cholesky_lower(b, src);
  Value info = cholesky_info(b, src, l, c.outputs[1]);
  if (check_errors) add_linalg_info_check(info, "linalg.cholesky_ex");
  return Values{upper ? mH(b, l) : l, info};
});

// The deprecated torch.cholesky (upper defaults to false): no info output, but
// the CPU kernel raises for a matrix that is not positive-definite.
TORCH_TPU_LOWERING("cholesky", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& a = operand(c, v, 0);
  require_lapack_dtype(c, a.type.dtype);
  if (numel(a.type) == 0) return Values{a};
  bool upper = c.arg(1).b;
  Value src = read_triangle(b, a, upper);
  Value l = cholesky_lower(b, src);
  add_linalg_info_check(cholesky_info(b, src, l, TensorType(DType::I32, batch_of(a.type))), "cholesky");
  return Values{upper ? mH(b, l) : l};
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
  // potri inverts the factor first: an exactly zero diagonal entry is its error.
  Value d = diagonal(b, f);
  add_linalg_info_check(first_bad_entry(b, b.compare(d, b.splat_float(d.type, 0.0), "EQ"),
                                        TensorType(DType::I32, batch_of(f.type))),
                        "cholesky_inverse");
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
