// Solves from a packed LU with pivots (linalg_lu_solve) and the inverse built on
// them (linalg_inv_ex = solve with the identity, as the CPU does). A = P L U:
// A X = B is X = U^-1 L^-1 P^T B; A^H X = B is X = P L^-H U^-H B (^T for
// real A). The right-side forms are left ones on transposes: X A = B is
// A^T X^T = B^T, and X A^H = B is A conj(X)^T = conj(B)^T.
#include "ops/linalg/common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

// The row permutation of 1-based LAPACK pivots (batch, k) over m rows, as
// (batch, m) i64 with (P^T B)[i] = B[perm[i]]: swaps j <-> piv[j] - 1 applied in order.
Value permutation(Builder& b, const Value& piv, int64_t m) {
  int64_t pr = piv.type.rank(), k = piv.type.dims[pr - 1];
  std::vector<int64_t> batch(piv.type.dims.begin(), piv.type.dims.end() - 1), vd = batch, bmap;
  vd.push_back(m);
  for (int64_t i = 0; i < pr - 1; ++i) bmap.push_back(i);
  TensorType vt(DType::I64, vd);
  Value idx = b.iota(vt, pr - 1), perm = idx, p64 = b.convert(piv, DType::I64);
  auto pick = [&](const Value& sel) {  // (batch): perm where sel (one position)
    return b.reduce({b.select(sel, perm, b.splat_int(vt, 0))}, {b.constant_int(DType::I64, 0)}, {pr - 1},
                    [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
  };
  for (int64_t j = 0; j < k; ++j) {
    std::vector<int64_t> start(pr, 0), limit = p64.type.dims, strides(pr, 1);
    start[pr - 1] = j;
    limit[pr - 1] = j + 1;
    Value pj = b.subtract(b.reshape(b.slice(p64, start, limit, strides), batch), b.splat_int(TensorType(DType::I64, batch), 1));
    Value at_j = b.compare(idx, b.splat_int(vt, j), "EQ");
    Value at_p = b.compare(idx, b.broadcast_in_dim(pj, vd, bmap), "EQ");
    Value vj = b.broadcast_in_dim(pick(at_j), vd, bmap), vp = b.broadcast_in_dim(pick(at_p), vd, bmap);
    perm = b.select(at_j, vp, b.select(at_p, vj, perm));
  }
  return perm;
}

// P^T x (forward) or P x (!forward) for x (batch, m, n): a one-hot select and
// sum, exact (no 0 * inf products, unlike a one-hot matmul).
Value permute_rows(Builder& b, const Value& x, const Value& perm, bool forward) {
  int64_t r = x.type.rank(), m = x.type.dims[r - 2];
  std::vector<int64_t> d4 = x.type.dims;  // (batch, i, a, n)
  d4.insert(d4.end() - 1, m);
  std::vector<int64_t> pmap, xmap;
  for (int64_t i = 0; i < r - 2; ++i) pmap.push_back(i), xmap.push_back(i);
  // forward: y[i] = sum_a (perm[i] == a) x[a]; else y[a] = sum_i (perm[i] == a) x[i].
  pmap.push_back(forward ? r - 2 : r - 1);
  xmap.push_back(r - 1);
  xmap.push_back(r);
  TensorType it(DType::I64, d4);
  Value hit = b.compare(b.broadcast_in_dim(perm, d4, pmap), b.iota(it, forward ? r - 1 : r - 2), "EQ");
  Value terms = b.select(hit, b.broadcast_in_dim(x, d4, xmap), b.splat_float(TensorType(x.type.dtype, d4), 0.0));
  return b.reduce({terms}, {b.constant_float(x.type.dtype, 0.0)}, {r - 1},
                  [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
}

// op(A) X = B with A = P L U packed in `lu`, op(A) = A, A^T or A^H.
// lu, piv and rhs share batch dims; rhs is (batch, m, n) with m, n > 0.
Value solve_left(Builder& b, const Value& lu, const Value& piv, const Value& rhs, OpA op_a) {
  Value perm = permutation(b, piv, lu.type.dims[lu.type.rank() - 1]);
  if (op_a == OpA::None) {
    Value y = permute_rows(b, rhs, perm, true);
    y = triangular_solve(b, lu, y, true, true, true, OpA::None);
    return triangular_solve(b, lu, y, true, false, false, OpA::None);
  }
  Value y = triangular_solve(b, lu, rhs, true, false, false, op_a);
  y = triangular_solve(b, lu, y, true, true, true, op_a);
  return permute_rows(b, y, perm, false);
}

// linalg_lu_solve's four forms: op(A) X = B (left) or X op(A) = B, op(A) = A^H when `adjoint`.
Value lu_solve(Builder& b, const Value& lu, const Value& piv, const Value& rhs, bool left, bool adjoint) {
  if (left) return solve_left(b, lu, piv, rhs, adjoint ? OpA::Adjoint : OpA::None);
  if (!adjoint) return mT(b, solve_left(b, lu, piv, mT(b, rhs), OpA::Transpose));
  return mH(b, solve_left(b, lu, piv, mH(b, rhs), OpA::None));
}

TORCH_TPU_ACCEPTS_COMPLEX("linalg_lu_solve", "linalg_inv_ex");

TORCH_TPU_LOWERING("linalg_lu_solve", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  require_lapack_dtype(c, out.dtype);
  bool left = c.arg(3).b, adjoint = c.arg(4).b;
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0)};
  std::vector<int64_t> batch = batch_of(out);
  Value lu = broadcast_batch(b, b.convert(operand(c, v, 0), out.dtype), batch);
  std::vector<int64_t> pd = batch;
  pd.push_back(operand(c, v, 1).type.dims.back());
  Value piv = b.broadcast_to(operand(c, v, 1), pd);
  Value rhs = broadcast_batch(b, b.convert(operand(c, v, 2), out.dtype), batch);
  return Values{lu_solve(b, lu, piv, rhs, left, adjoint)};
});

// info comes from the factorization (> 0: U is singular, as LAPACK's getrf).
TORCH_TPU_LOWERING("linalg_inv_ex", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  require_lapack_dtype(c, out.dtype);
  Value a = operand(c, v, 0);
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0), b.splat_int(c.outputs[1], 0)};
  PackedLU f = lu_factor_packed(b, a);
  if (c.arg(1).b) add_linalg_info_check(f.info, "linalg.inv_ex");  // check_errors
  int64_t r = out.rank();
  TensorType it(DType::I64, out.dims);
  Value eye = b.select(b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "EQ"), b.splat_float(out, 1.0), b.splat_float(out, 0.0));
  return Values{solve_left(b, f.lu, f.pivots, eye, OpA::None), f.info};
});

// _linalg_solve_ex(A, B, left, check_errors) -> (result, LU, pivots, info): LU
// is A's factorization whatever A's layout (torch 2.13's CPU kernel; its
// backward solves with LU's adjoint). A vector B (B.dim() == 1, or A's shape
// without its last dim) is solved as a one-column matrix.
TORCH_TPU_ACCEPTS_COMPLEX("_linalg_solve_ex");
TORCH_TPU_LOWERING("_linalg_solve_ex", [](Builder& b, const OpCall& c, const Values& v) {
  const Value &a = operand(c, v, 0), &rhs = operand(c, v, 1);
  const TensorType &out = c.outputs[0], &lut = c.outputs[1], &pt = c.outputs[2], &it = c.outputs[3];
  require_lapack_dtype(c, out.dtype);
  bool left = c.arg(2).b, check_errors = c.arg(3).b;
  Value A = b.convert(a, out.dtype);
  PackedLU f = numel(A.type) == 0 ? PackedLU{b.splat_float(lut, 0.0), b.splat_int(pt, 0), b.splat_int(it, 0)}
                                  : lu_factor_packed(b, A);
  if (check_errors) add_linalg_info_check(f.info, "torch.linalg.solve_ex");
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0), f.lu, f.pivots, f.info};
  std::vector<int64_t> a_rows(a.type.dims.begin(), a.type.dims.end() - 1);
  bool vector_case = rhs.type.rank() == 1 || rhs.type.dims == a_rows;
  Value B = b.convert(rhs, out.dtype);
  std::vector<int64_t> mat_dims = out.dims;
  if (vector_case) mat_dims.push_back(1);
  std::vector<int64_t> batch(mat_dims.begin(), mat_dims.end() - 2);
  if (vector_case) B = b.reshape(B, [&] { auto d = B.type.dims; d.push_back(1); return d; }());
  B = broadcast_batch(b, B, batch);
  Value lu = broadcast_batch(b, f.lu, batch);
  std::vector<int64_t> pd = batch;
  pd.push_back(f.pivots.type.dims.back());
  Value piv = b.broadcast_to(f.pivots, pd);
  Value x = lu_solve(b, lu, piv, B, left, false);
  return Values{b.reshape(x, out.dims), f.lu, f.pivots, f.info};
});

}  // namespace
}  // namespace torch_tpu::ops
