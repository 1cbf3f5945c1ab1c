// Shared pieces of the general eigensolver (linalg_eig / _linalg_eigvals):
// a small toolkit for scalar-style code on one n x n matrix in StableHLO
// (0-d values, masked whole-matrix updates, while loops), and the stages of
// LAPACK's ?geev pipeline, each in its own file:
//   eig_hessenberg.cpp  balancing (?gebal 'B'), Hessenberg reduction (?gehd2
//                       plus the accumulated Q), back-transformation (?gebak)
//   eig_qr.cpp          the small-matrix QR algorithm (?lahqr, with ?lanv2)
//   eig_vectors.cpp     eigenvalues from the Schur form, eigenvectors by
//                       back-substitution (?trevc), normalization (?geev)
// The eigenvalue order is LAPACK's: the order in which they appear on the
// Schur form's diagonal, which depends on the whole pipeline.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/linalg/common.h"

namespace torch_tpu::ops::linalg::eig {

// Scalar and vector helpers bound to one builder (regions get their own).
// `r` is the real compute dtype (f32 or f64), n the matrix order.
struct Ctx {
  Builder& b;
  DType r;
  int64_t n;

  DType cplx() const { return r == DType::F64 ? DType::C128 : DType::C64; }
  double ulp() const { return r == DType::F64 ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23); }
  double safmin() const { return r == DType::F64 ? std::ldexp(1.0, -1022) : std::ldexp(1.0, -126); }

  Value f(double v) const { return b.constant_float(r, v); }
  Value fz(double v, DType t) const { return b.constant_float(t, v); }
  Value i(int64_t v) const { return b.constant_int(DType::I64, v); }
  Value t(bool v) const { return b.constant_bool(v); }
  TensorType mat(DType t) const { return TensorType(t, {n, n}); }
  TensorType vec(DType t) const { return TensorType(t, {n}); }

  Value add(const Value& x, const Value& y) const { return b.add(x, y); }
  Value sub(const Value& x, const Value& y) const { return b.subtract(x, y); }
  Value mul(const Value& x, const Value& y) const { return b.multiply(x, y); }
  Value div(const Value& x, const Value& y) const { return b.divide(x, y); }
  Value max(const Value& x, const Value& y) const { return b.maximum(x, y); }
  Value min(const Value& x, const Value& y) const { return b.minimum(x, y); }
  Value neg(const Value& x) const { return b.negate(x); }
  Value abs(const Value& x) const { return magnitude(b, x); }
  Value sqrt(const Value& x) const { return b.unary("sqrt", x); }
  Value sel(const Value& p, const Value& x, const Value& y) const { return b.select(p, x, y); }
  Value cmp(const Value& x, const Value& y, const char* d) const { return b.compare(x, y, d); }
  Value lt(const Value& x, const Value& y) const { return cmp(x, y, "LT"); }
  Value le(const Value& x, const Value& y) const { return cmp(x, y, "LE"); }
  Value gt(const Value& x, const Value& y) const { return cmp(x, y, "GT"); }
  Value ge(const Value& x, const Value& y) const { return cmp(x, y, "GE"); }
  Value eq(const Value& x, const Value& y) const { return cmp(x, y, "EQ"); }
  Value ne(const Value& x, const Value& y) const { return cmp(x, y, "NE"); }
  Value land(const Value& x, const Value& y) const { return b.binary("and", x, y); }
  Value lor(const Value& x, const Value& y) const { return b.binary("or", x, y); }
  Value lnot(const Value& x) const { return b.unary("not", x); }
  // x broadcast to `like`'s shape (x 0-d).
  Value bc(const Value& x, const TensorType& like) const { return b.broadcast_in_dim(x, like.dims, {}); }
  // Fortran SIGN(a, s): |a| with the sign of s (s >= 0 counts as positive).
  Value sign(const Value& a, const Value& s) const { return sel(ge(s, fz(0, s.type.dtype)), abs(a), neg(abs(a))); }
  // ?lapy2: sqrt(x^2 + y^2) without needless overflow.
  Value hypot(const Value& x, const Value& y) const {
    Value ax = abs(x), ay = abs(y), w = max(ax, ay), z = min(ax, ay);
    Value q = div(z, sel(eq(w, f(0)), f(1), w));
    return sel(eq(z, f(0)), w, mul(w, sqrt(add(f(1), mul(q, q)))));
  }

  // ?nrm2 of the magnitudes `m` (real, >= 0) over `dims` (all when empty),
  // scaled by their maximum so squares neither overflow nor underflow.
  Value nrm2(const Value& m, std::vector<int64_t> dims = {}) const {
    if (dims.empty()) for (int64_t d = 0; d < m.type.rank(); ++d) dims.push_back(d);
    Value mx = reduce(m, dims, "maximum", fz(0, m.type.dtype));
    std::vector<int64_t> keep;
    for (int64_t d = 0; d < m.type.rank(); ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) keep.push_back(d);
    Value safe = sel(eq(mx, zeros(mx.type)), b.splat_float(mx.type, 1.0), mx);
    Value q = div(m, b.broadcast_in_dim(safe, m.type.dims, keep));
    return mul(safe, sqrt(sum(mul(q, q), dims)));
  }

  // Index grids (i64): row and column of every matrix entry, position in a vector.
  Value row() const { return b.iota(mat(DType::I64), 0); }
  Value col() const { return b.iota(mat(DType::I64), 1); }
  Value idx() const { return b.iota(vec(DType::I64), 0); }
  Value mrow(const Value& i0) const { return bc(i0, mat(DType::I64)); }
  Value vi(const Value& i0) const { return bc(i0, vec(DType::I64)); }

  // m[i, j] (i, j 0-d i64, in range), and m with m[i, j] = x.
  Value get(const Value& m, const Value& i0, const Value& j0) const {
    return b.reshape(b.dynamic_slice(m, {i0, j0}, {1, 1}), {});
  }
  Value set(const Value& m, const Value& i0, const Value& j0, const Value& x) const {
    return b.dynamic_update_slice(m, b.reshape(x, {1, 1}), {i0, j0});
  }
  Value vget(const Value& v, const Value& i0) const { return b.reshape(b.dynamic_slice(v, {i0}, {1}), {}); }
  Value vset(const Value& v, const Value& i0, const Value& x) const {
    return b.dynamic_update_slice(v, b.reshape(x, {1}), {i0});
  }
  Value row_of(const Value& m, const Value& i0) const { return b.reshape(b.dynamic_slice(m, {i0, i(0)}, {1, n}), {n}); }
  Value col_of(const Value& m, const Value& j0) const { return b.reshape(b.dynamic_slice(m, {i(0), j0}, {n, 1}), {n}); }
  // A vector broadcast along rows (each row a copy: dims {1}) or columns ({0}).
  Value as_rows(const Value& v) const { return b.broadcast_in_dim(v, {n, n}, {1}); }
  Value as_cols(const Value& v) const { return b.broadcast_in_dim(v, {n, n}, {0}); }
  Value outer(const Value& x, const Value& y) const { return mul(as_cols(x), as_rows(y)); }

  Value reduce(const Value& x, const std::vector<int64_t>& dims, const std::string& op, const Value& init) const {
    return b.reduce({x}, {init}, dims, [op](Builder& rb, const Values& a) { return Values{rb.binary(op, a[0], a[1])}; })[0];
  }
  Value sum(const Value& x, std::vector<int64_t> dims = {}) const {
    if (dims.empty()) for (int64_t d = 0; d < x.type.rank(); ++d) dims.push_back(d);
    return reduce(x, dims, "add", fz(0, x.type.dtype));
  }
  Value imax(const Value& x) const { return reduce(x, {0}, "maximum", i(INT64_MIN)); }
  Value imin(const Value& x) const { return reduce(x, {0}, "minimum", i(INT64_MAX)); }
  Value any(const Value& x, int64_t dim) const { return reduce(x, {dim}, "or", t(false)); }
  Value zeros(const TensorType& tt) const { return b.splat_float(tt, 0.0); }

  // Diagonal d[k] = m[k, k]; subdiagonal s[k] = m[k, k-1] (s[0] = 0);
  // superdiagonal p[k] = m[k-1, k] (p[0] = 0).
  Value diag(const Value& m) const { return sum(sel(eq(row(), col()), m, zeros(m.type)), {1}); }
  Value subd(const Value& m) const { return sum(sel(eq(col(), sub(row(), mrow(i(1)))), m, zeros(m.type)), {1}); }
  Value supd(const Value& m) const { return sum(sel(eq(row(), sub(col(), mrow(i(1)))), m, zeros(m.type)), {0}); }
  // y[k] = v[k - s], zero where k - s is out of range.
  Value shift(const Value& v, int64_t s) const {
    Value z = fz(0, v.type.dtype);
    if (s >= 0) return b.slice(b.pad(v, z, {s}, {0}, {0}), {0}, {n}, {1});
    return b.slice(b.pad(v, z, {0}, {-s}, {0}), {-s}, {n - s}, {1});
  }
  // u = v^T m and w = m v (vectors of length n).
  Value vecmat(const Value& v, const Value& m) const {
    return b.emit1("dot_general", {v, m},
                   "dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>" +
                       precision_config(MatmulPrecision::Highest, m.type.dtype),
                   TensorType(m.type.dtype, {n}));
  }
  Value matvec(const Value& m, const Value& v) const {
    return b.emit1("dot_general", {m, v},
                   "dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>" +
                       precision_config(MatmulPrecision::Highest, m.type.dtype),
                   TensorType(m.type.dtype, {n}));
  }
};

using Body = std::function<Values(Ctx&, const Values&)>;
using Cond = std::function<Value(Ctx&, const Values&)>;

// stablehlo.while over `init` (types taken from it).
inline Values loop(Ctx& k, const Values& init, const Cond& cond, const Body& body) {
  std::vector<TensorType> types;
  for (const auto& v : init) types.push_back(v.type);
  DType r = k.r;
  int64_t n = k.n;
  return k.b.emit("while", init, "", types,
                  {{types, [=](Builder& rb, const Values& q) { Ctx c{rb, r, n}; return Values{cond(c, q)}; }},
                   {types, [=](Builder& rb, const Values& q) { Ctx c{rb, r, n}; return body(c, q); }}});
}

// Stage results (all for one n x n matrix, n >= 1).
struct Balanced {
  Value a, scale, lo, hi;  // balanced A, ?gebal's SCALE (permutation indices / factors), ILO, IHI (0-based)
};
Balanced gebal(Ctx& k, const Value& a);
// Hessenberg form of the balanced matrix and the accumulated Q (a = Q h Q^T).
std::pair<Value, Value> gehrd(Ctx& k, const Value& a, const Value& lo, const Value& hi);
// ?gebak: undoes the balancing on the (complex) eigenvectors' rows.
Value gebak(Ctx& k, const Value& v, const Value& scale, const Value& lo, const Value& hi);
// The real Schur form T (with 2x2 blocks standardized by ?lanv2) and Z
// (z updated in place), and a 0-d flag: true when the iteration failed to converge.
struct Schur {
  Value t, z, failed;
};
Schur lahqr(Ctx& k, const Value& h, const Value& z, const Value& lo, const Value& hi);
// Eigenvalues (complex vector) of a real quasi-triangular T.
Value schur_eigenvalues(Ctx& k, const Value& t);
// Unit-norm eigenvectors (complex) from the real Schur form T, Z and the
// eigenvalues w, before ?gebak; normalized after.
Value real_schur_vectors(Ctx& k, const Value& t, const Value& z, const Value& w);
// Eigenvectors Z X of a complex upper triangular T (X by back-substitution,
// X[k, k] = 1), before ?gebak and normalization.
Value triangular_vectors(Ctx& k, const Value& t, const Value& z, const Value& w);
// ?lahqr for complex H (?lahqr's complex version: single Wilkinson shifts,
// subdiagonal kept real): the complex Schur form T and Z.
Schur zlahqr(Ctx& k, const Value& h, const Value& z, const Value& lo, const Value& hi);
// ?geev's normalization: unit 2-norm, the largest component of each vector
// real (only for the columns where `rotate` is true): positive for complex
// input (zgeev), with the sign of its real part for real input (dgeev's dlartg).
Value normalize(Ctx& k, const Value& v, const Value& rotate, bool keep_sign);

}  // namespace torch_tpu::ops::linalg::eig
