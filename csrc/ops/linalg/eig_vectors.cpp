// The general eigensolver's last stages (see eig.h): eigenvalues read off
// the real Schur form (2x2 blocks [a b; c a] give a +- i sqrt|b| sqrt|c|, the
// one with positive imaginary part first, as ?lanv2 returns them), and
// eigenvectors: each 2x2 block is first rotated to complex upper triangular
// form by a unitary 2x2 rotation (the same eigenvectors: the Schur vectors
// span the same invariant subspaces), then every eigenvector of the
// triangular matrix comes from ?trevc's back-substitution (tiny pivots
// replaced by smin = max(ulp |w|, smlnum)), is transformed back by Z, and
// ?geev normalizes it: unit 2-norm, and for complex eigenvalues the
// component of largest magnitude made real.
#include "ops/linalg/eig.h"

namespace torch_tpu::ops::linalg::eig {

Value schur_eigenvalues(Ctx& c, const Value& t) {
  Value d = c.diag(t), sd = c.subd(t), pd = c.supd(t);
  Value zv = c.zeros(d.type);
  Value s1 = c.shift(sd, -1), p1 = c.shift(pd, -1);
  Value first = c.ne(s1, zv), second = c.ne(sd, zv);
  Value im1 = c.mul(c.sqrt(c.abs(p1)), c.sqrt(c.abs(s1)));
  Value im2 = c.neg(c.mul(c.sqrt(c.abs(pd)), c.sqrt(c.abs(sd))));
  Value wi = c.sel(first, im1, c.sel(second, im2, zv));
  return c.b.complex(d, wi);
}

Value real_schur_vectors(Ctx& c, const Value& t, const Value& z, const Value& w) {
  const int64_t n = c.n;
  DType cx = c.cplx();
  Value first = c.ne(c.shift(c.subd(t), -1), c.zeros(c.vec(c.r)));
  Value tc = c.b.convert(t, cx), zc = c.b.convert(z, cx);
  // Rotate each 2x2 block (k, k+1) to upper triangular form.
  Values rot = loop(
      c, {tc, zc, c.i(0), first, w}, [n](Ctx& q, const Values& s) { return q.lt(s[2], q.i(n - 1)); },
      [cx](Ctx& q, const Values& s) {
        const Value &T = s[0], &Z = s[1], &k = s[2];
        Value k1 = q.add(k, q.i(1));
        Value is_pair = q.vget(s[3], k);
        Value a = q.get(T, k, k), bv = q.get(T, k, k1), lam = q.vget(s[4], k);
        Value v0 = bv, v1 = q.sub(lam, a);
        Value nv = q.sqrt(q.add(q.mul(q.b.real(v0), q.b.real(v0)), q.add(q.mul(q.b.real(v1), q.b.real(v1)),
                                                                       q.mul(q.b.imag(v1), q.b.imag(v1)))));
        nv = q.b.complex(nv, q.fz(0, q.r));
        v0 = q.div(v0, nv), v1 = q.div(v1, nv);
        Value row = q.row(), col = q.col();
        TensorType mt = q.mat(cx);
        Value rk = q.eq(row, q.mrow(k)), rk1 = q.eq(row, q.mrow(k1)), ck = q.eq(col, q.mrow(k)), ck1 = q.eq(col, q.mrow(k1));
        Value G = identity(q.b, mt);
        G = q.sel(q.land(rk, ck), q.bc(v0, mt), G);
        G = q.sel(q.land(rk1, ck), q.bc(v1, mt), G);
        G = q.sel(q.land(rk, ck1), q.bc(q.neg(conj(q.b, v1)), mt), G);
        G = q.sel(q.land(rk1, ck1), q.bc(conj(q.b, v0), mt), G);
        Value T2 = batched_matmul(q.b, batched_matmul(q.b, mH(q.b, G), T), G);
        T2 = q.set(T2, k1, k, q.fz(0, cx));
        Value Z2 = batched_matmul(q.b, Z, G);
        return Values{q.sel(is_pair, T2, T), q.sel(is_pair, Z2, Z), k1, s[3], s[4]};
      });
  Value v = triangular_vectors(c, rot[0], rot[1], w);
  // dtrevc's phase for a pair's first vector (x = 1 at the block's first row
  // when |b| >= |c|, else x = i at its second): here x = G e_k, i.e. v0 and
  // v1 there, so the phases agree up to a positive factor after multiplying
  // by sign(b) in the first case. The pair's second vector is the conjugate.
  Value sd = c.subd(t), pd = c.supd(t), zr = c.zeros(c.vec(c.r));
  Value s1 = c.shift(sd, -1), p1 = c.shift(pd, -1);
  Value flip = c.land(c.land(c.ne(s1, zr), c.ge(c.abs(p1), c.abs(s1))), c.lt(p1, zr));
  Value sgn = c.b.convert(c.sel(flip, c.b.splat_float(zr.type, -1.0), c.b.splat_float(zr.type, 1.0)), cx);
  v = c.mul(v, c.as_rows(sgn));
  Value prev = c.b.slice(c.b.pad(v, c.fz(0, cx), {0, 1}, {0, 0}, {0, 0}), {0, 0}, {n, n}, {1, 1});
  v = c.sel(c.as_rows(c.ne(sd, zr)), conj(c.b, prev), v);
  // Real eigenvalues have real eigenvectors.
  Value real_w = c.eq(c.b.imag(w), c.zeros(c.vec(c.r)));
  Value vr = c.b.complex(c.b.real(v), c.zeros(c.mat(c.r)));
  return c.sel(c.as_rows(real_w), vr, v);
}

Value triangular_vectors(Ctx& c, const Value& T, const Value& Z, const Value& w) {
  const int64_t n = c.n;
  DType cx = c.cplx();
  // Back-substitution for all eigenvectors at once, row j from n-2 up to 0.
  double smlnum = c.safmin() * (static_cast<double>(n) / c.ulp()), ulp = c.ulp();
  Values bs = loop(
      c, {identity(c.b, c.mat(cx)), c.i(n - 2), T, w}, [](Ctx& q, const Values& s) { return q.ge(s[1], q.i(0)); },
      [=](Ctx& q, const Values& s) {
        const Value &X = s[0], &j = s[1], &T = s[2], &w = s[3];
        Value ix = q.idx();
        Value trow = q.row_of(T, j);
        trow = q.sel(q.gt(ix, q.vi(j)), trow, q.zeros(trow.type));
        Value rr = q.vecmat(trow, X);
        Value den = q.sub(q.bc(q.get(T, j, j), w.type), w);
        Value cabs1 = q.add(q.abs(q.b.real(den)), q.abs(q.b.imag(den)));
        Value wabs = q.add(q.abs(q.b.real(w)), q.abs(q.b.imag(w)));
        Value smin = q.max(q.mul(wabs, q.bc(q.f(ulp), wabs.type)), q.bc(q.f(smlnum), wabs.type));
        den = q.sel(q.lt(cabs1, smin), q.b.complex(smin, q.zeros(smin.type)), den);
        Value xj = q.neg(q.div(rr, den));
        Value row = q.row(), col = q.col();
        Value X2 = q.sel(q.land(q.eq(row, q.mrow(j)), q.gt(col, q.mrow(j))), q.as_rows(xj), X);
        return Values{X2, q.sub(j, q.i(1)), T, w};
      });
  return batched_matmul(c.b, Z, bs[0]);
}

Value normalize(Ctx& c, const Value& v, const Value& rotate, bool keep_sign) {
  const int64_t n = c.n;
  Value nrm = c.nrm2(c.abs(v), {0});
  Value v1 = c.div(v, c.as_rows(c.b.complex(nrm, c.zeros(nrm.type))));
  Value re1 = c.b.real(v1), im1 = c.b.imag(v1);
  Value m2 = c.add(c.mul(re1, re1), c.mul(im1, im1));
  Value mx = c.reduce(m2, {0}, "maximum", c.b.lowest(c.r));
  Value row = c.row();
  Value kmax = c.reduce(c.sel(c.eq(m2, c.as_rows(mx)), row, c.b.splat_int(row.type, n)), {0}, "minimum", c.i(n));
  Value at = c.eq(row, c.as_rows(kmax));
  Value vk = c.sum(c.sel(at, v1, c.zeros(v1.type)), {0});
  Value ak = c.abs(vk);
  Value ok = c.land(rotate, c.gt(ak, c.zeros(ak.type)));
  Value ph = c.div(conj(c.b, vk), c.b.complex(c.sel(ok, ak, c.b.splat_float(ak.type, 1.0)), c.zeros(ak.type)));
  if (keep_sign) {  // dgeev's dlartg: the component becomes -|v_k| where re < 0 and |re| > |im|
    Value re = c.b.real(vk), im = c.b.imag(vk);
    Value neg = c.land(c.lt(re, c.zeros(ak.type)), c.gt(c.abs(re), c.abs(im)));
    ph = c.sel(neg, c.neg(ph), ph);
  }
  ph = c.sel(ok, ph, c.b.splat_float(ph.type, 1.0));
  Value v2 = c.mul(v1, c.as_rows(ph));
  // The largest component exactly real.
  Value fixed = c.b.complex(c.b.real(v2), c.zeros(c.mat(c.r)));
  return c.sel(c.land(at, c.as_rows(ok)), fixed, v2);
}

}  // namespace torch_tpu::ops::linalg::eig
