// LU factorization with partial pivoting (linalg_lu_factor_ex), real or complex. StableHLO has no LU
// op, so the elimination is unrolled over the min(m, n) columns (static), each
// step a few whole-matrix masked ops. The pivot is LAPACK's choice (idamax: the
// first row of largest |value| at or below the diagonal), so pivots match the
// CPU exactly outside of rounding ties. (_linalg_det / _linalg_slogdet are not
// lowered on top of it: the CPU factors A^T for a contiguous A, and their
// backward reads LU with that layout-dependent meaning, which a rule can't see.)
#include <algorithm>
#include <stdexcept>

#include "ops/linalg/common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

struct LU {
  Value lu, pivots, info;  // pivots/info in i32, 1-based like LAPACK
};

Value reduce_dim(Builder& b, const Value& x, int64_t dim, const std::string& op, const Value& init) {
  return b.reduce({x}, {init}, {dim}, [op](Builder& rb, const Values& a) { return Values{rb.binary(op, a[0], a[1])}; })[0];
}

LU lu_factor(Builder& b, const Value& a) {
  const TensorType& t = a.type;
  int64_t r = t.rank(), m = t.dims[r - 2], n = t.dims[r - 1], k_n = std::min(m, n);
  std::vector<int64_t> batch = batch_of(t);
  DType f = t.dtype;
  TensorType it(DType::I64, t.dims);
  Value row = b.iota(it, r - 2), col = b.iota(it, r - 1);
  std::vector<int64_t> col_dims = batch;  // (batch, m): one column
  col_dims.push_back(m);
  TensorType ct(DType::I64, col_dims);
  Value crow = b.iota(ct, r - 2);
  std::vector<int64_t> keep_rows, keep_cols;  // broadcast maps from (batch, m) / (batch, n)
  for (int64_t i = 0; i < r - 2; ++i) keep_rows.push_back(i), keep_cols.push_back(i);
  keep_rows.push_back(r - 2);
  keep_cols.push_back(r - 1);
  TensorType bt(DType::I64, batch);
  Value x = a, info = b.splat_int(bt, 0);
  std::vector<Value> pivots;
  auto row_of = [&](const Value& sel) {  // (batch, n): sum of the rows where sel
    return reduce_dim(b, b.select(sel, x, b.splat_float(t, 0.0)), r - 2, "add", b.constant_float(f, 0.0));
  };
  for (int64_t k = 0; k < k_n; ++k) {
    std::vector<int64_t> start(r, 0), limit = t.dims, strides(r, 1);
    start[r - 1] = k;
    limit[r - 1] = k + 1;
    Value c = b.reshape(b.slice(x, start, limit, strides), col_dims);
    // First row >= k of largest |c| (|re| + |im| for complex, LAPACK's izamax).
    Value mag = hlo::is_complex(f) ? b.add(b.unary("abs", b.real(c)), b.unary("abs", b.imag(c))) : b.unary("abs", c);
    // idamax compares with >, which a NaN never passes: a NaN row is skipped,
    // unless it is the first candidate (row k), which then stays the pivot.
    Value is_nan = b.compare(mag, mag, "NE");
    Value candidate = b.binary("and", b.compare(crow, b.splat_int(ct, k), "GE"), b.unary("not", is_nan));
    Value absc = b.select(candidate, mag, b.splat_float(mag.type, -1.0));
    Value mx = reduce_dim(b, absc, r - 2, "maximum", b.lowest(mag.type.dtype));
    Value is_max = b.compare(absc, b.broadcast_in_dim(mx, col_dims, std::vector<int64_t>(keep_rows.begin(), keep_rows.end() - 1)), "EQ");
    Value p = reduce_dim(b, b.select(is_max, crow, b.splat_int(ct, m)), r - 2, "minimum", b.constant_int(DType::I64, m));
    std::vector<int64_t> ks(r - 1, 0), kl = col_dims, k1(r - 1, 1);
    ks[r - 2] = k;
    kl[r - 2] = k + 1;
    Value first_nan = b.reshape(b.slice(is_nan, ks, kl, k1), batch);
    p = b.select(first_nan, b.splat_int(bt, k), p);
    pivots.push_back(b.add(p, b.splat_int(bt, 1)));
    // Swap rows k and p.
    Value pb = b.broadcast_in_dim(p, t.dims, std::vector<int64_t>(keep_rows.begin(), keep_rows.end() - 1));
    Value is_k = b.compare(row, b.splat_int(it, k), "EQ"), is_p = b.compare(row, pb, "EQ");
    Value rk = b.broadcast_in_dim(row_of(is_k), t.dims, keep_cols);
    Value rp = b.broadcast_in_dim(row_of(is_p), t.dims, keep_cols);
    x = b.select(is_k, rp, b.select(is_p, rk, x));
    // Multipliers l = x[:, k] / pivot below the diagonal (0 when the pivot is 0:
    // the column below is then all zero, and LAPACK records info = k + 1).
    Value piv = reduce_dim(b, b.select(b.binary("and", is_k, b.compare(col, b.splat_int(it, k), "EQ")), x, b.splat_float(t, 0.0)),
                           r - 2, "add", b.constant_float(f, 0.0));
    piv = reduce_dim(b, piv, r - 2, "add", b.constant_float(f, 0.0));  // (batch)
    Value zero_piv = b.compare(piv, b.splat_float(TensorType(f, batch), 0.0), "EQ");
    info = b.select(b.binary("and", zero_piv, b.compare(info, b.splat_int(bt, 0), "EQ")), b.splat_int(bt, k + 1), info);
    Value safe = b.select(zero_piv, b.splat_float(TensorType(f, batch), 1.0), piv);
    std::vector<int64_t> bmap(keep_rows.begin(), keep_rows.end() - 1);
    Value colk = b.slice(x, start, limit, strides);  // (batch, m, 1)
    Value below = b.compare(row, b.splat_int(it, k), "GT");
    Value l = b.divide(b.broadcast_to(colk, t.dims), b.broadcast_in_dim(safe, t.dims, bmap));
    std::vector<int64_t> rs(r, 0), rl = t.dims;
    rs[r - 2] = k;
    rl[r - 2] = k + 1;
    Value urow = b.broadcast_to(b.slice(x, rs, rl, strides), t.dims);  // row k, after the swap
    Value right = b.compare(col, b.splat_int(it, k), "GT");
    Value is_colk = b.compare(col, b.splat_int(it, k), "EQ");
    // The product rounded before the subtraction, as LAPACK's update: with an
    // fma, an exactly singular matrix could get a pivot of ~1e-7 for 0.
    Value updated = b.subtract(x, keep_rounded(b, b.multiply(l, urow)));
    x = b.select(below, b.select(is_colk, l, b.select(right, updated, x)), x);
  }
  TensorType pt(DType::I32, [&] { auto d = batch; d.push_back(k_n); return d; }());
  Value piv;
  if (k_n == 0) {
    piv = b.splat_int(pt, 0);
  } else {
    std::vector<Value> cols;
    for (auto& p : pivots) {
      auto d = batch;
      d.push_back(1);
      cols.push_back(b.reshape(b.convert(p, DType::I32), d));
    }
    piv = b.concatenate(cols, r - 2);
  }
  return {x, piv, b.convert(info, DType::I32)};
}

LU factor_checked(Builder& b, const OpCall& c, const Value& a) {
  require_lapack_dtype(c, a.type.dtype);
  return lu_factor(b, a);
}

TORCH_TPU_ACCEPTS_COMPLEX("linalg_lu_factor_ex", "lu_unpack", "linalg_lu");

TORCH_TPU_LOWERING("linalg_lu_factor_ex", [](Builder& b, const OpCall& c, const Values& v) {
  if (!c.arg(1).b) throw std::invalid_argument(c.op + ": LU without pivoting is not implemented on the CPU");
  LU f = factor_checked(b, c, operand(c, v, 0));
  if (c.arg(2).b) add_linalg_info_check(f.info, "torch.linalg.lu_factor_ex");  // check_errors
  return Values{f.lu, f.pivots, f.info};
});


// (P, L, U) with A = P L U from lu_factor's packed LU and 1-based pivots. The
// row swaps are applied in order to an index vector (unrolled over the pivots),
// giving perm with (P^T A)[i] = A[perm[i]], i.e. P[perm[i], i] = 1.
Values unpack(Builder& b, const Value& lu, const Value& piv, const TensorType& pt, const TensorType& lt,
              const TensorType& ut) {
  int64_t r = lu.type.rank(), m = lu.type.dims[r - 2], n = lu.type.dims[r - 1], k = std::min(m, n);
  auto zero = [&](const TensorType& t) { return b.convert(b.splat_int(TensorType(DType::I64, t.dims), 0), t.dtype); };
  auto tri = [&](const TensorType& t, bool lower) {  // the L or U block of LU, in t's shape
    if (numel(t) == 0) return zero(t);
    std::vector<int64_t> start(r, 0), limit = lu.type.dims, strides(r, 1);
    limit[r - 2] = t.dims[r - 2];
    limit[r - 1] = t.dims[r - 1];
    Value x = b.convert(b.slice(lu, start, limit, strides), t.dtype);
    TensorType it(DType::I64, t.dims);
    Value row = b.iota(it, r - 2), col = b.iota(it, r - 1);
    if (!lower) return b.select(b.compare(row, col, "LE"), x, zero(t));
    Value one = b.convert(b.splat_int(it, 1), t.dtype);
    return b.select(b.compare(row, col, "GT"), x, b.select(b.compare(row, col, "EQ"), one, zero(t)));
  };
  Value L = tri(lt, true), U = tri(ut, false);
  if (numel(pt) == 0) return Values{zero(pt), L, U};
  // perm: (batch, m) row indices; swap entries j and piv[j] - 1 for j < k.
  std::vector<int64_t> batch = batch_of(lu.type), vd = batch;
  vd.push_back(m);
  TensorType vt(DType::I64, vd);
  Value idx = b.iota(vt, r - 2), perm = idx;
  std::vector<int64_t> bmap;
  for (int64_t i = 0; i < r - 2; ++i) bmap.push_back(i);
  auto pick = [&](const Value& sel) {  // (batch): perm at the one position where sel
    return reduce_dim(b, b.select(sel, perm, b.splat_int(vt, 0)), r - 2, "add", b.constant_int(DType::I64, 0));
  };
  Value p64 = b.convert(piv, DType::I64);
  for (int64_t j = 0; j < k; ++j) {
    std::vector<int64_t> start(r - 1, 0), limit = p64.type.dims, strides(r - 1, 1);
    start[r - 2] = j;
    limit[r - 2] = j + 1;
    Value pj = b.subtract(b.reshape(b.slice(p64, start, limit, strides), batch), b.splat_int(TensorType(DType::I64, batch), 1));
    Value at_j = b.compare(idx, b.splat_int(vt, j), "EQ");
    Value at_p = b.compare(idx, b.broadcast_in_dim(pj, vd, bmap), "EQ");
    Value vj = b.broadcast_in_dim(pick(at_j), vd, bmap), vp = b.broadcast_in_dim(pick(at_p), vd, bmap);
    perm = b.select(at_j, vp, b.select(at_p, vj, perm));
  }
  // P[..., a, i] = (perm[..., i] == a).
  TensorType it(DType::I64, pt.dims);
  std::vector<int64_t> cmap = bmap;
  cmap.push_back(r - 1);
  Value pb = b.broadcast_in_dim(perm, pt.dims, cmap);
  Value one = b.convert(b.splat_int(it, 1), pt.dtype);
  return Values{b.select(b.compare(pb, b.iota(it, r - 2), "EQ"), one, zero(pt)), L, U};
}

TORCH_TPU_LOWERING("lu_unpack", [](Builder& b, const OpCall& c, const Values& v) {
  // The meta kernel does not check the pivots' shape (the CPU kernel does):
  // unpack reads pivots as (*batch, min(m, n)).
  const Value lu = operand(c, v, 0), piv = operand(c, v, 1);
  if (lu.type.rank() >= 2 && numel(c.outputs[0]) > 0) {
    int64_t r = lu.type.rank();
    std::vector<int64_t> want = batch_of(lu.type);
    want.push_back(std::min(lu.type.dims[r - 2], lu.type.dims[r - 1]));
    if (piv.type.dims != want)
      throw std::invalid_argument(c.op + ": pivots of shape " + piv.type.str() +
                                  " do not match LU's batch and min(m, n)");
  }
  return unpack(b, lu, piv, c.outputs[0], c.outputs[1], c.outputs[2]);
});

// linalg_lu = lu_factor then lu_unpack, in one program.
TORCH_TPU_LOWERING("linalg_lu", [](Builder& b, const OpCall& c, const Values& v) {
  if (!c.arg(1).b) throw std::invalid_argument(c.op + ": LU without pivoting is not implemented on the CPU");
  LU f = factor_checked(b, c, operand(c, v, 0));
  return unpack(b, f.lu, f.pivots, c.outputs[0], c.outputs[1], c.outputs[2]);
});

}  // namespace
}  // namespace torch_tpu::ops
