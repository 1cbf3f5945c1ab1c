// LDL^T / LDL^H factorization with Bunch-Kaufman pivoting (linalg_ldl_factor_ex)
// and the solve on its result (linalg_ldl_solve), real or complex, as the CPU's
// LAPACK calls: ?sytrf (hermitian=False, complex symmetric too; real inputs
// always) or ?hetrf (hermitian=True, complex), uplo = 'L' (torch exposes no
// upper form), then ?sytrs / ?hetrs.
//
// The factorization is LAPACK's unblocked ?sytf2 / ?hetf2 (lower): for n < 64
// ?sytrf runs exactly that, and the blocked path (?lasyf) makes the same pivot
// choices and leaves L in the same "standard form", so one algorithm matches
// both. It is a stablehlo.while over steps; every batch matrix carries its own
// column index k (a step takes 1 or 2 columns), and each step is a few masked
// whole-matrix ops (matrices here are small). The working matrix is kept full
// (its upper triangle the transpose / adjoint of the lower one), so LAPACK's
// row-and-column interchange within the trailing block A[k:, k:] is a symmetric
// swap of two rows and two columns; columns left of k (L already stored) are
// never swapped, as in ?sytf2. Pivots use LAPACK's encoding: 1-based, kp for a
// 1x1 block, -kp twice for a 2x2 block; info = the first k whose column was
// entirely zero (D(k, k) exactly zero).
#include <cmath>
#include <stdexcept>

#include "ops/linalg/common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

// Bunch-Kaufman's growth bound (LAPACK's ALPHA).
const double kAlpha = (1.0 + std::sqrt(17.0)) / 8.0;

Value sum_dim(Builder& b, const Value& x, int64_t dim) {
  return b.reduce({x}, {b.constant_float(x.type.dtype, 0.0)}, {dim},
                  [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
}
Value sum_int_dim(Builder& b, const Value& x, int64_t dim) {
  return b.reduce({x}, {b.constant_int(x.type.dtype, 0)}, {dim},
                  [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; })[0];
}
Value reduce_op(Builder& b, const Value& x, int64_t dim, const std::string& op, const Value& init) {
  return b.reduce({x}, {init}, {dim}, [op](Builder& rb, const Values& a) { return Values{rb.binary(op, a[0], a[1])}; })[0];
}
Value any_all(Builder& b, const Value& pred) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < pred.type.rank(); ++d) all.push_back(d);
  return b.reduce({pred}, {b.constant_bool(false)}, all,
                  [](Builder& rb, const Values& x) { return Values{rb.binary("or", x[0], x[1])}; })[0];
}

// Shapes of one flattened batch: nb matrices (nb, n, n), vectors (nb, n), scalars (nb).
struct Dims {
  int64_t nb, n;
  std::vector<int64_t> mat() const { return {nb, n, n}; }
  std::vector<int64_t> vec() const { return {nb, n}; }
  std::vector<int64_t> sc() const { return {nb}; }
};

// Per-batch scalar (nb) broadcast over `dims` (first dim kept).
Value bs(Builder& b, const Value& s, const std::vector<int64_t>& dims) { return b.broadcast_in_dim(s, dims, {0}); }

// LAPACK's CABS1 (|re| + |im|; |x| for real x): what i?amax and ?sytf2 compare.
Value cabs1(Builder& b, const Value& x) {
  if (!hlo::is_complex(x.type.dtype)) return b.unary("abs", x);
  return b.add(b.unary("abs", b.real(x)), b.unary("abs", b.imag(x)));
}

// x with its imaginary part dropped (kept complex); x for real x.
Value real_part(Builder& b, const Value& x) {
  if (!hlo::is_complex(x.type.dtype)) return x;
  Value re = b.real(x);
  return b.complex(re, b.splat_float(re.type, 0.0));
}

// `r` (real) as a value of x's dtype.
Value as_dtype(Builder& b, const Value& r, DType t) { return b.convert(r, t); }

// Lower triangle authoritative: the upper one becomes its transpose (adjoint if herm).
Value symmetrize(Builder& b, const Value& w, bool herm, const Value& row, const Value& col) {
  Value t = b.transpose(w, {0, 2, 1});
  if (herm) t = conj(b, t);
  return b.select(b.compare(row, col, "GE"), w, t);
}

struct LDL {
  Value ld, pivots, info;  // ld (nb, n, n) lower; pivots (nb, n) i32; info (nb) i32
};

// ?sytf2 / ?hetf2 (lower) of `a` (nb, n, n), n > 0, nb > 0; herm only for complex.
LDL sytf2(Builder& b, const Value& a, bool herm) {
  Dims d{a.type.dims[0], a.type.dims[1]};
  DType f = a.type.dtype;
  int64_t n = d.n;
  TensorType mt(DType::I64, d.mat());
  Value row = b.iota(mt, 1), col = b.iota(mt, 2);
  Value w = a;
  if (herm) w = b.select(b.compare(row, col, "EQ"), real_part(b, w), w);
  w = symmetrize(b, w, herm, row, col);
  TensorType st(DType::I64, d.sc()), vt(DType::I64, d.vec()), scalar_i(DType::I64, {});
  std::vector<TensorType> carry{scalar_i, w.type, st, vt, st};
  Values init{b.constant_int(DType::I64, 0), w, b.splat_int(st, 0), b.splat_int(vt, 0), b.splat_int(st, 0)};
  auto body = [d, f, n, herm](Builder& rb, const Values& q) {
    const Value &w0 = q[1], &k = q[2], &piv = q[3], &info = q[4];
    DType re_t = hlo::complex_component(f);
    TensorType mt(DType::I64, d.mat()), vt(DType::I64, d.vec()), st(DType::I64, d.sc());
    TensorType fm(f, d.mat()), fv(f, d.vec()), rv(re_t, d.vec()), rs(re_t, d.sc());
    Value row = rb.iota(mt, 1), col = rb.iota(mt, 2), vi = rb.iota(vt, 1);
    auto m3 = [&](const Value& s) { return bs(rb, s, d.mat()); };
    auto v2 = [&](const Value& s) { return bs(rb, s, d.vec()); };
    auto i_s = [&](int64_t v) { return rb.splat_int(st, v); };
    auto r_s = [&](double v) { return rb.splat_float(rs, v); };
    auto pand = [&](const Value& x, const Value& y) { return rb.binary("and", x, y); };
    auto pnot = [&](const Value& x) { return rb.unary("not", x); };
    // Column j (per batch) of m as (nb, n); row j likewise; element j of a (nb, n) vector.
    auto column = [&](const Value& m, const Value& j) {
      return sum_dim(rb, rb.select(rb.compare(col, m3(j), "EQ"), m, rb.splat_float(fm, 0.0)), 2);
    };
    auto row_at = [&](const Value& m, const Value& j) {
      return sum_dim(rb, rb.select(rb.compare(row, m3(j), "EQ"), m, rb.splat_float(fm, 0.0)), 1);
    };
    auto elem = [&](const Value& v, const Value& j) {
      return sum_dim(rb, rb.select(rb.compare(vi, v2(j), "EQ"), v, rb.splat_float(v.type, 0.0)), 1);
    };
    auto dmag = [&](const Value& x) { return herm ? rb.unary("abs", rb.real(x)) : cabs1(rb, x); };

    Value active = rb.compare(k, i_s(n), "LT");
    Value kv = v2(k);
    // The CPU's (MKL's) i?amax over the entries of `mag` (nb, n) where `in`: the
    // first NaN if there is one, else the first index of the largest value.
    // Returns (index, its value).
    auto iamax = [&](const Value& mag, const Value& in) {
      Value isnan = pand(in, rb.compare(mag, mag, "NE"));
      Value first_nan = reduce_op(rb, rb.select(isnan, vi, rb.splat_int(vt, n)), 1, "minimum", rb.constant_int(DType::I64, n));
      Value has_nan = rb.compare(first_nan, i_s(n), "LT");
      Value m = rb.select(pand(in, pnot(isnan)), mag, rb.splat_float(rv, -1.0));
      Value mx = reduce_op(rb, m, 1, "maximum", rb.lowest(re_t));
      Value at = reduce_op(rb, rb.select(pand(in, rb.compare(m, v2(mx), "EQ")), vi, rb.splat_int(vt, n)), 1, "minimum",
                           rb.constant_int(DType::I64, n));
      return std::make_pair(rb.select(has_nan, first_nan, at), rb.select(has_nan, r_s(NAN), mx));
    };
    // Fortran's MAX(a, b) as compiled for the CPU's LAPACK (x86 maxsd): a > b ? a : b,
    // so b when either is NaN (MKL's ?sytf2 has no separate NaN test).
    auto fmax = [&](const Value& a, const Value& bb) { return rb.select(rb.compare(a, bb, "GT"), a, bb); };
    // COLMAX / IMAX: the largest CABS1 below the diagonal in column k (0 in the last column).
    Value ck = column(w0, k);
    Value absakk = dmag(elem(ck, k));
    Value k1 = rb.add(k, i_s(1));
    Value last = rb.compare(k1, i_s(n), "GE");
    auto [imax0, colmax0] = iamax(cabs1(rb, ck), rb.compare(vi, kv, "GT"));
    Value imax = rb.select(last, k, imax0), colmax = rb.select(last, r_s(0.0), colmax0);
    // ROWMAX: the largest off-diagonal CABS1 in row imax (columns k..imax-1), then
    // in column imax below the diagonal (the same magnitudes in the full matrix).
    Value ri = row_at(w0, imax), rmag = cabs1(rb, ri), imax1 = rb.add(imax, i_s(1));
    Value rowmax = iamax(rmag, pand(rb.compare(vi, kv, "GE"), rb.compare(vi, v2(imax), "LT"))).second;
    Value below_i = iamax(rmag, rb.compare(vi, v2(imax), "GT")).second;
    rowmax = rb.select(rb.compare(imax1, i_s(n), "LT"), fmax(rowmax, below_i), rowmax);
    Value aii = dmag(elem(ri, imax));
    Value alpha = r_s(kAlpha);
    Value zero_col = rb.compare(fmax(absakk, colmax), r_s(0.0), "EQ");
    // The complex routines (zsytf2 / zhetf2 in MKL) also stop at a NaN diagonal.
    if (hlo::is_complex(f)) zero_col = rb.binary("or", zero_col, rb.compare(absakk, absakk, "NE"));
    Value c1 = rb.compare(absakk, rb.multiply(alpha, colmax), "GE");
    Value c2 = rb.compare(absakk, rb.multiply(rb.multiply(alpha, colmax), rb.divide(colmax, rowmax)), "GE");
    Value c3 = rb.compare(aii, rb.multiply(alpha, rowmax), "GE");
    Value no_swap = rb.binary("or", zero_col, rb.binary("or", c1, c2));
    Value kp = rb.select(no_swap, k, imax);
    Value two = pand(active, pand(pnot(no_swap), pnot(c3)));
    Value one = pand(active, pand(pnot(zero_col), pnot(two)));  // a 1x1 step that updates
    Value kk = rb.add(k, rb.select(two, i_s(1), i_s(0)));

    // Interchange rows and columns kk and kp of the trailing block A[k:, k:].
    Value trail = pand(m3(active), pand(rb.compare(row, m3(k), "GE"), rb.compare(col, m3(k), "GE")));
    Value rkk = rb.broadcast_in_dim(row_at(w0, kk), d.mat(), {0, 2});
    Value rkp = rb.broadcast_in_dim(row_at(w0, kp), d.mat(), {0, 2});
    Value w1 = rb.select(pand(trail, rb.compare(row, m3(kk), "EQ")), rkp,
                         rb.select(pand(trail, rb.compare(row, m3(kp), "EQ")), rkk, w0));
    Value ckk = rb.broadcast_in_dim(column(w1, kk), d.mat(), {0, 1});
    Value ckp = rb.broadcast_in_dim(column(w1, kp), d.mat(), {0, 1});
    Value w = rb.select(pand(trail, rb.compare(col, m3(kk), "EQ")), ckp,
                        rb.select(pand(trail, rb.compare(col, m3(kp), "EQ")), ckk, w1));

    Value c0 = column(w, k), c1v = column(w, k1);
    auto outer = [&](const Value& x, const Value& y) {  // x_i * y_j
      return rb.multiply(rb.broadcast_in_dim(x, d.mat(), {0, 1}), rb.broadcast_in_dim(y, d.mat(), {0, 2}));
    };
    auto cj = [&](const Value& x) { return herm ? conj(rb, x) : x; };
    Value rows_k = pand(rb.compare(row, m3(k), "GT"), rb.compare(col, m3(k), "GT"));
    Value rows_k1 = pand(rb.compare(row, m3(k1), "GT"), rb.compare(col, m3(k1), "GT"));
    // 1x1 pivot: A[k+1:, k+1:] -= x (1/D) x^T (?syr / ?her: temp_j = -d11 * x_j), L = x / D.
    Value x = rb.select(rb.compare(vi, kv, "GT"), c0, rb.splat_float(fv, 0.0));
    Value dk = elem(c0, k);
    Value d11 = rb.divide(rb.splat_float(dk.type, 1.0), herm ? real_part(rb, dk) : dk);
    if (hlo::is_complex(f) && !herm) {
      // The CPU's complex 1 / D is NaN (not 0) for an infinite D (the textbook formula).
      Value inf = r_s(INFINITY);
      Value is_inf = rb.binary("or", rb.compare(rb.unary("abs", rb.real(dk)), inf, "EQ"),
                               rb.compare(rb.unary("abs", rb.imag(dk)), inf, "EQ"));
      Value nan = r_s(NAN);
      d11 = rb.select(is_inf, rb.complex(nan, nan), d11);
    }
    Value temp = rb.multiply(v2(rb.negate(d11)), cj(x));
    Value upd1 = rb.add(w, outer(x, temp));
    Value one3 = m3(one);
    // The reference BLAS ?syr / ?her return at once when alpha = -1/D is 0 and skip
    // column j where x_j = 0 (no 0 * inf there).
    Value live = pand(rb.compare(d11, rb.splat_float(d11.type, 0.0), "NE"), one);
    Value xj_nz = rb.broadcast_in_dim(rb.compare(x, rb.splat_float(fv, 0.0), "NE"), d.mat(), {0, 2});
    w = rb.select(pand(pand(m3(live), xj_nz), rows_k), upd1, w);
    w = rb.select(pand(one3, pand(rb.compare(col, m3(k), "EQ"), rb.compare(row, m3(k), "GT"))),
                  rb.broadcast_in_dim(rb.multiply(x, v2(d11)), d.mat(), {0, 1}), w);
    // 2x2 pivot: (W_k, W_k+1) = (L_k, L_k+1) D, A[k+2:, k+2:] -= W D^-1 W^T.
    Value akk = elem(c0, k), ak1k = elem(c0, k1), ak1k1 = elem(c1v, k1);
    Value wk, wkp1;
    if (herm) {
      Value dd = magnitude(rb, ak1k);  // DLAPY2
      Value e11 = rb.divide(rb.real(ak1k1), dd), e22 = rb.divide(rb.real(akk), dd);
      Value tt = rb.divide(r_s(1.0), rb.subtract(rb.multiply(e11, e22), r_s(1.0)));
      Value e21 = rb.divide(ak1k, as_dtype(rb, dd, f));
      Value dn = as_dtype(rb, rb.divide(tt, dd), f);
      Value f11 = as_dtype(rb, e11, f), f22 = as_dtype(rb, e22, f);
      wk = rb.multiply(v2(dn), rb.subtract(rb.multiply(v2(f11), c0), rb.multiply(v2(e21), c1v)));
      wkp1 = rb.multiply(v2(dn), rb.subtract(rb.multiply(v2(f22), c1v), rb.multiply(v2(conj(rb, e21)), c0)));
    } else {
      Value e21 = ak1k;
      Value e11 = rb.divide(ak1k1, e21), e22 = rb.divide(akk, e21);
      Value one_f = rb.splat_float(e11.type, 1.0);
      Value t = rb.divide(one_f, rb.subtract(rb.multiply(e11, e22), one_f));
      e21 = rb.divide(t, e21);
      wk = rb.multiply(v2(e21), rb.subtract(rb.multiply(v2(e11), c0), c1v));
      wkp1 = rb.multiply(v2(e21), rb.subtract(rb.multiply(v2(e22), c1v), c0));
    }
    Value upd2 = rb.subtract(rb.subtract(w, outer(c0, cj(wk))), outer(c1v, cj(wkp1)));
    Value two3 = m3(two);
    w = rb.select(pand(two3, rows_k1), upd2, w);
    Value below_k1 = rb.compare(row, m3(k1), "GT");
    w = rb.select(pand(two3, pand(below_k1, rb.compare(col, m3(k), "EQ"))), rb.broadcast_in_dim(wk, d.mat(), {0, 1}), w);
    w = rb.select(pand(two3, pand(below_k1, rb.compare(col, m3(k1), "EQ"))), rb.broadcast_in_dim(wkp1, d.mat(), {0, 1}), w);
    if (herm) w = rb.select(rb.compare(row, col, "EQ"), real_part(rb, w), w);
    w = symmetrize(rb, w, herm, row, col);

    // IPIV and INFO, then the next column.
    Value kp1 = rb.add(kp, i_s(1));
    Value code = rb.select(two, rb.negate(kp1), kp1);
    Value at_k = pand(v2(active), rb.compare(vi, kv, "EQ"));
    Value at_k1 = pand(v2(two), rb.compare(vi, v2(k1), "EQ"));
    Value piv2 = rb.select(rb.binary("or", at_k, at_k1), v2(code), piv);
    Value info2 = rb.select(pand(pand(active, zero_col), rb.compare(info, i_s(0), "EQ")), k1, info);
    Value k2 = rb.select(active, rb.add(k, rb.select(two, i_s(2), i_s(1))), k);
    return Values{rb.add(q[0], rb.constant_int(DType::I64, 1)), w, k2, piv2, info2};
  };
  Values loop = b.emit(
      "while", init, "", carry,
      {{carry, [n](Builder& rb, const Values& q) { return Values{rb.compare(q[0], rb.constant_int(DType::I64, n), "LT")}; }},
       {carry, body}});
  Value ld = b.select(b.compare(row, col, "GE"), loop[1], b.splat_float(a.type, 0.0));
  return {ld, b.convert(loop[3], DType::I32), b.convert(loop[4], DType::I32)};
}

TORCH_TPU_ACCEPTS_COMPLEX("linalg_ldl_factor_ex", "linalg_ldl_solve");

// linalg_ldl_factor_ex(A, *, hermitian, check_errors) -> (LD, pivots, info).
// (linalg_ldl_factor is the composite on top of it.) No autograd: the CPU has
// no derivative for it either.
TORCH_TPU_LOWERING("linalg_ldl_factor_ex", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& a = operand(c, v, 0);
  require_lapack_dtype(c, a.type.dtype);
  const TensorType &lt = c.outputs[0], &pt = c.outputs[1], &it = c.outputs[2];
  bool herm = c.arg(1).b && hlo::is_complex(a.type.dtype), check_errors = c.arg(2).b;
  if (numel(lt) == 0) return Values{b.splat_float(lt, 0.0), b.splat_int(pt, 0), b.splat_int(it, 0)};
  int64_t r = lt.rank(), n = lt.dims[r - 1], nb = numel(lt) / (n * n);
  LDL f = sytf2(b, b.reshape(b.convert(a, lt.dtype), {nb, n, n}), herm);
  Value info = b.reshape(f.info, it.dims);
  if (check_errors)
    add_runtime_check(any_all(b, b.compare(info, b.splat_int(info.type, 0), "GT")), CheckKind::Runtime,
                      "torch.linalg.ldl_factor_ex: The factorization could not be completed because the block "
                      "diagonal matrix D has an exactly zero diagonal element (info > 0).");
  return Values{b.reshape(f.ld, lt.dims), b.reshape(f.pivots, pt.dims), info};
});

// ?sytrs / ?hetrs (lower): A X = B with A = P1 L1 P2 L2 ... D ... (L1)^T (P1)^T
// from ?sytf2's LD and pivots, all (nb, n, ...) flattened, n > 0, m > 0.
Value sytrs(Builder& b, const Value& ld, const Value& piv, const Value& rhs, bool herm) {
  int64_t nb = ld.type.dims[0], n = ld.type.dims[1], m = rhs.type.dims[2];
  DType f = ld.type.dtype;
  TensorType scalar_i(DType::I64, {}), st(DType::I64, {nb});
  std::vector<TensorType> carry{scalar_i, rhs.type, st, ld.type, piv.type};
  // Shared pieces of both sweeps, built in the loop body's builder.
  struct Ctx {
    Builder& rb;
    int64_t nb, n, m;
    DType f;
    Value row, col, vi, brow;
    std::vector<int64_t> md() const { return {nb, n, n}; }
    std::vector<int64_t> bd() const { return {nb, n, m}; }
  };
  auto make_ctx = [=](Builder& rb) {
    return Ctx{rb, nb, n, m, f,
               rb.iota(TensorType(DType::I64, {nb, n, n}), 1), rb.iota(TensorType(DType::I64, {nb, n, n}), 2),
               rb.iota(TensorType(DType::I64, {nb, n}), 1), rb.iota(TensorType(DType::I64, {nb, n, m}), 1)};
  };
  // Column j of LD as (nb, n), rows > `above` only (others zero).
  auto lcol = [](Ctx& x, const Value& ldv, const Value& j, const Value& above) {
    Builder& rb = x.rb;
    TensorType fm(x.f, x.md());
    Value c = sum_dim(rb, rb.select(rb.compare(x.col, bs(rb, j, x.md()), "EQ"), ldv, rb.splat_float(fm, 0.0)), 2);
    return rb.select(rb.compare(x.vi, bs(rb, above, {x.nb, x.n}), "GT"), c, rb.splat_float(c.type, 0.0));
  };
  auto ld_at = [](Ctx& x, const Value& ldv, const Value& i, const Value& j) {  // LD[i, j] (nb)
    Builder& rb = x.rb;
    TensorType fm(x.f, x.md());
    Value sel = rb.binary("and", rb.compare(x.row, bs(rb, i, x.md()), "EQ"), rb.compare(x.col, bs(rb, j, x.md()), "EQ"));
    Value s = rb.select(sel, ldv, rb.splat_float(fm, 0.0));
    return sum_dim(rb, sum_dim(rb, s, 2), 1);
  };
  auto brow_at = [](Ctx& x, const Value& bv, const Value& j) {  // row j of B (nb, m)
    Builder& rb = x.rb;
    return sum_dim(rb, rb.select(rb.compare(x.brow, bs(rb, j, x.bd()), "EQ"), bv, rb.splat_float(bv.type, 0.0)), 1);
  };
  auto set_row = [](Ctx& x, const Value& bv, const Value& j, const Value& r, const Value& on) {
    Builder& rb = x.rb;
    Value sel = rb.binary("and", bs(rb, on, x.bd()), rb.compare(x.brow, bs(rb, j, x.bd()), "EQ"));
    return rb.select(sel, rb.broadcast_in_dim(r, x.bd(), {0, 2}), bv);
  };
  auto swap_rows = [=](Ctx& x, const Value& bv, const Value& i, const Value& j, const Value& on) {
    Value ri = brow_at(x, bv, i), rj = brow_at(x, bv, j);
    Value t = set_row(x, bv, i, rj, on);
    // i == j: both writes put back the same row.
    return set_row(x, t, j, ri, on);
  };
  auto piv_at = [](Ctx& x, const Value& p, const Value& k) {
    Builder& rb = x.rb;
    TensorType vt(DType::I64, {x.nb, x.n});
    return sum_int_dim(rb, rb.select(rb.compare(x.vi, bs(rb, k, {x.nb, x.n}), "EQ"), p, rb.splat_int(vt, 0)), 1);
  };
  // B[i, j] + l_i * (-r_j) for rows i > `above` (?ger: columns j with r_j = 0 are skipped).
  auto outer_sub = [](Ctx& x, const Value& bv, const Value& l, const Value& r, const Value& above) {
    Builder& rb = x.rb;
    Value upd = rb.add(bv, rb.multiply(rb.broadcast_in_dim(l, x.bd(), {0, 1}),
                                       rb.broadcast_in_dim(rb.negate(r), x.bd(), {0, 2})));
    Value nz = rb.broadcast_in_dim(rb.compare(r, rb.splat_float(r.type, 0.0), "NE"), x.bd(), {0, 2});
    Value rows = rb.compare(x.brow, bs(rb, above, x.bd()), "GT");
    return rb.select(rb.binary("and", nz, rows), upd, bv);
  };
  auto cond = [n](Builder& rb, const Values& q) { return Values{rb.compare(q[0], rb.constant_int(DType::I64, n), "LT")}; };

  // Forward: L D Y = P^T-applied B, one (1x1 or 2x2) block at a time.
  auto fwd = [=](Builder& rb, const Values& q) {
    Ctx x = make_ctx(rb);
    const Value &bv0 = q[1], &k = q[2], &ldv = q[3], &pv = q[4];
    TensorType st(DType::I64, {nb});
    auto i_s = [&](int64_t v) { return rb.splat_int(st, v); };
    Value active = rb.compare(k, i_s(n), "LT");
    Value p = piv_at(x, pv, k);
    Value two = rb.binary("and", active, rb.compare(p, i_s(0), "LT"));
    Value one = rb.binary("and", active, rb.unary("not", two));
    Value kp = rb.subtract(rb.select(rb.compare(p, i_s(0), "LT"), rb.negate(p), p), i_s(1));
    Value k1 = rb.add(k, i_s(1));
    Value kk = rb.select(two, k1, k);
    Value bv = swap_rows(x, bv0, kk, kp, active);
    Value bk = brow_at(x, bv, k), bk1 = brow_at(x, bv, k1);
    // 1x1: B[k+1:] -= L[k+1:, k] B[k]; B[k] *= 1 / D[k, k].
    Value dkk = ld_at(x, ldv, k, k);
    Value s1 = rb.divide(rb.splat_float(dkk.type, 1.0), herm ? real_part(rb, dkk) : dkk);
    Value b1 = outer_sub(x, bv, lcol(x, ldv, k, k), bk, k);
    b1 = set_row(x, b1, k, rb.multiply(bk, rb.broadcast_in_dim(s1, {nb, m}, {0})), one);
    // 2x2: B[k+2:] -= L[k+2:, k] B[k] + L[k+2:, k+1] B[k+1]; then the 2x2 D block.
    Value b2 = outer_sub(x, outer_sub(x, bv, lcol(x, ldv, k, k1), bk, k1), lcol(x, ldv, k1, k1), bk1, k1);
    Value akm1k = ld_at(x, ldv, k1, k);
    Value akm1k_c = herm ? conj(rb, akm1k) : akm1k;
    // D = [[a, c'], [c, d]] (c' = conj(c) for ?hetrs): divide row 1 by c', row 2 by c.
    Value akm1 = rb.divide(dkk, akm1k_c), ak = rb.divide(ld_at(x, ldv, k1, k1), akm1k);
    Value denom = rb.subtract(rb.multiply(akm1, ak), rb.splat_float(ak.type, 1.0));
    auto bm = [&](const Value& s) { return rb.broadcast_in_dim(s, {nb, m}, {0}); };
    Value bkm1 = rb.divide(bk, bm(akm1k_c)), bkk = rb.divide(bk1, bm(akm1k));
    Value nk = rb.divide(rb.subtract(rb.multiply(bm(ak), bkm1), bkk), bm(denom));
    Value nk1 = rb.divide(rb.subtract(rb.multiply(bm(akm1), bkk), bkm1), bm(denom));
    b2 = set_row(x, set_row(x, b2, k, nk, two), k1, nk1, two);
    Value b3 = rb.select(bs(rb, two, x.bd()), b2, rb.select(bs(rb, one, x.bd()), b1, bv));
    Value k2 = rb.select(active, rb.add(k, rb.select(two, i_s(2), i_s(1))), k);
    return Values{rb.add(q[0], rb.constant_int(DType::I64, 1)), b3, k2, ldv, pv};
  };
  // Backward: L^T X = Y (L^H for ?hetrs), from the last block up, undoing the interchanges.
  auto bwd = [=](Builder& rb, const Values& q) {
    Ctx x = make_ctx(rb);
    const Value &bv0 = q[1], &k = q[2], &ldv = q[3], &pv = q[4];
    TensorType st(DType::I64, {nb});
    auto i_s = [&](int64_t v) { return rb.splat_int(st, v); };
    Value active = rb.compare(k, i_s(0), "GE");
    Value p = piv_at(x, pv, k);
    Value two = rb.binary("and", active, rb.compare(p, i_s(0), "LT"));
    Value kp = rb.subtract(rb.select(rb.compare(p, i_s(0), "LT"), rb.negate(p), p), i_s(1));
    Value km1 = rb.subtract(k, i_s(1));
    // B[j] -= sum_{i > k} L[i, j] B[i] (conj(L) for ?hetrs), j = k and, for a 2x2 block, k - 1.
    auto dotcol = [&](const Value& j) {
      Value l = lcol(x, ldv, j, k);
      if (herm) l = conj(rb, l);
      Value terms = rb.multiply(rb.broadcast_in_dim(l, x.bd(), {0, 1}), bv0);
      terms = rb.select(rb.compare(x.brow, bs(rb, k, x.bd()), "GT"), terms, rb.splat_float(bv0.type, 0.0));
      return sum_dim(rb, terms, 1);
    };
    Value bv = set_row(x, bv0, k, rb.subtract(brow_at(x, bv0, k), dotcol(k)), active);
    bv = set_row(x, bv, km1, rb.subtract(brow_at(x, bv0, km1), dotcol(km1)), two);
    bv = swap_rows(x, bv, k, kp, active);
    Value k2 = rb.select(active, rb.subtract(k, rb.select(two, i_s(2), i_s(1))), k);
    return Values{rb.add(q[0], rb.constant_int(DType::I64, 1)), bv, k2, ldv, pv};
  };
  Values f1 = b.emit("while", {b.constant_int(DType::I64, 0), rhs, b.splat_int(st, 0), ld, piv}, "", carry,
                     {{carry, cond}, {carry, fwd}});
  Values f2 = b.emit("while", {b.constant_int(DType::I64, 0), f1[1], b.splat_int(st, n - 1), ld, piv}, "", carry,
                     {{carry, cond}, {carry, bwd}});
  return f2[1];
}

// linalg_ldl_solve(LD, pivots, B, *, hermitian) -> X, batch dims broadcast.
TORCH_TPU_LOWERING("linalg_ldl_solve", [](Builder& b, const OpCall& c, const Values& v) {
  const Value &ld = operand(c, v, 0), &piv = operand(c, v, 1), &rhs = operand(c, v, 2);
  const TensorType& out = c.outputs[0];
  require_lapack_dtype(c, ld.type.dtype);
  if (!hlo::is_integral(piv.type.dtype) || piv.type.dtype == DType::Pred)
    throw std::invalid_argument(c.op + ": Expected pivots to be integers");
  bool herm = c.arg(3).b && hlo::is_complex(ld.type.dtype);
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0)};
  int64_t r = out.rank(), n = out.dims[r - 2], m = out.dims[r - 1], nb = numel(out) / (n * m);
  std::vector<int64_t> batch = batch_of(out), pd = batch;
  pd.push_back(n);
  Value a = b.reshape(broadcast_batch(b, b.convert(ld, out.dtype), batch), {nb, n, n});
  Value p = b.reshape(b.broadcast_to(b.convert(piv, DType::I64), pd), {nb, n});
  Value x = b.reshape(b.broadcast_to(b.convert(rhs, out.dtype), out.dims), {nb, n, m});
  return Values{b.reshape(sytrs(b, a, p, x, herm), out.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
