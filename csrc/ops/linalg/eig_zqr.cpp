// The general eigensolver's QR stage for complex input (see eig.h): LAPACK's
// zlahqr / clahqr on rows/columns lo..hi of an upper Hessenberg matrix. The
// subdiagonal is first made real (diagonal unitary scaling), then single-shift
// sweeps with Wilkinson's shift (exceptional shifts at the 10th and 20th sweep
// of an eigenvalue), Ahues and Tisseur's deflation test with |re| + |im|
// magnitudes, the search for two small consecutive subdiagonals, and the
// rescalings that keep the subdiagonal real. Like the real version, one while
// loop runs a state machine (search / deflate, or one bulge-chasing step).
#include <algorithm>

#include "ops/linalg/eig.h"

namespace torch_tpu::ops::linalg::eig {

namespace {

Value cabs1(Ctx& k, const Value& x) { return k.add(k.abs(k.b.real(x)), k.abs(k.b.imag(x))); }
Value cplx(Ctx& k, const Value& re) { return k.b.complex(re, k.zeros(re.type)); }

}  // namespace

Schur zlahqr(Ctx& c, const Value& h0, const Value& z0, const Value& lo, const Value& hi) {
  const int64_t n = c.n;
  const DType cx = c.cplx();
  const double ulp = c.ulp(), safmin = c.safmin();
  Value h = c.sel(c.gt(c.row(), c.add(c.col(), c.mrow(c.i(1)))), c.zeros(h0.type), h0);
  // Real subdiagonal: for i = lo+1..hi, scale row i (columns >= i) by sc and
  // column i (rows <= i+1) and Z's column i by conj(sc), sc = conj(h)/|h|.
  Values pre = loop(
      c, {h, z0, c.add(lo, c.i(1)), hi}, [](Ctx& q, const Values& s) { return q.le(s[2], s[3]); },
      [cx](Ctx& q, const Values& s) {
        const Value &H = s[0], &Z = s[1], &i = s[2];
        Value him = q.get(H, i, q.sub(i, q.i(1)));
        Value doit = q.ne(q.b.imag(him), q.f(0));
        Value sc = q.div(him, cplx(q, q.sel(doit, cabs1(q, him), q.f(1))));
        sc = q.div(conj(q.b, sc), cplx(q, q.sel(doit, q.abs(sc), q.f(1))));
        Value row = q.row(), col = q.col();
        TensorType mt = q.mat(cx);
        Value H1 = q.sel(q.land(q.eq(row, q.mrow(i)), q.ge(col, q.mrow(i))), q.mul(H, q.bc(sc, mt)), H);
        H1 = q.sel(q.land(q.eq(col, q.mrow(i)), q.le(row, q.mrow(q.add(i, q.i(1))))), q.mul(H1, q.bc(conj(q.b, sc), mt)), H1);
        H1 = q.set(H1, i, q.sub(i, q.i(1)), cplx(q, q.abs(him)));
        Value Z1 = q.sel(q.eq(col, q.mrow(i)), q.mul(Z, q.bc(conj(q.b, sc), mt)), Z);
        return Values{q.sel(doit, H1, H), q.sel(doit, Z1, Z), q.add(i, q.i(1)), s[3]};
      });
  const int64_t cap = n * (30 * std::max<int64_t>(10, n) + 1) * (n + 2);
  // Carry: 0 h, 1 z, 2 I, 3 L, 4 its, 5 phase, 6 K, 7 M, 8-9 V, 10 steps, 11 lo, 12 hi.
  Value zi = c.i(0), zc = c.fz(0, cx);
  Values init{pre[0], pre[1], hi, lo, zi, zi, zi, zi, zc, zc, zi, lo, hi};
  Values out = loop(
      c, init, [cap](Ctx& q, const Values& s) { return q.land(q.ge(s[2], s[11]), q.lt(s[10], q.i(cap))); },
      [=](Ctx& q, const Values& s) {
        const Value &H = s[0], &Z = s[1], &I = s[2], &L = s[3], &its = s[4], &phase = s[5], &K = s[6], &M = s[7];
        const Value &lo = s[11], &hi = s[12];
        Value one = q.i(1), two = q.i(2);
        Value row = q.row(), col = q.col(), ix = q.idx();
        TensorType mt = q.mat(cx), vt = q.vec(cx), rv = q.vec(q.r);
        Value zv = q.zeros(rv);
        Value smlnum = q.mul(q.f(safmin / ulp), q.b.convert(q.add(q.sub(hi, lo), one), q.r));
        Value vsml = q.bc(smlnum, rv), vulp = q.bc(q.f(ulp), rv);
        // ---- phase 0: negligible subdiagonal in (L, I] ----
        Value d = q.diag(H), sd = q.subd(H), pd = q.supd(H);
        Value ad = cabs1(q, d), as = cabs1(q, sd), ap = cabs1(q, pd), asr = q.abs(q.b.real(sd));
        Value tst = q.add(q.shift(ad, 1), ad);
        Value extra = q.add(q.sel(q.ge(q.sub(ix, q.b.splat_int(ix.type, 2)), q.vi(lo)), q.shift(asr, 1), zv),
                            q.sel(q.le(q.add(ix, q.b.splat_int(ix.type, 1)), q.vi(hi)), q.shift(asr, -1), zv));
        tst = q.sel(q.eq(tst, zv), q.add(tst, extra), tst);
        Value ab = q.max(as, ap), ba = q.min(as, ap);
        Value ddiff = cabs1(q, q.sub(q.shift(d, 1), d));
        Value aa = q.max(ad, ddiff), bb = q.min(ad, ddiff);
        Value ss = q.add(aa, ab);
        Value ahues = q.le(q.mul(ba, q.div(ab, ss)), q.max(vsml, q.mul(vulp, q.mul(bb, q.div(aa, ss)))));
        Value negl = q.lor(q.le(as, vsml), q.land(q.le(asr, q.mul(vulp, tst)), ahues));
        Value valid = q.land(q.gt(ix, q.vi(L)), q.le(ix, q.vi(I)));
        Value Ln = q.max(L, q.imax(q.sel(q.land(valid, negl), ix, q.b.splat_int(ix.type, -1))));
        Value H0 = q.sel(q.gt(Ln, lo), q.set(H, Ln, q.sub(q.max(Ln, one), one), zc), H);
        Value deflate = q.ge(Ln, I);
        // Shift.
        Value Im1 = q.max(q.sub(I, one), q.i(0));
        Value Ls1 = q.min(q.add(Ln, one), q.i(n - 1));
        Value ex10 = q.eq(its, q.i(10)), ex20 = q.eq(its, q.i(20));
        Value exs = q.mul(q.f(0.75), q.abs(q.b.real(q.sel(ex10, q.get(H0, Ls1, Ln), q.get(H0, I, Im1)))));
        Value ext = q.add(cplx(q, exs), q.sel(ex10, q.get(H0, Ln, Ln), q.get(H0, I, I)));
        Value T = q.get(H0, I, I);
        Value U = q.mul(q.sqrt(q.get(H0, Im1, I)), q.sqrt(q.get(H0, I, Im1)));
        Value S = cabs1(q, U);
        Value X = q.mul(cplx(q, q.f(0.5)), q.sub(q.get(H0, Im1, Im1), T));
        Value SX = cabs1(q, X);
        Value S2 = q.max(S, SX);
        Value S2s = cplx(q, q.sel(q.eq(S2, q.f(0)), q.f(1), S2));
        Value xs = q.div(X, S2s), us = q.div(U, S2s);
        Value Y = q.mul(cplx(q, S2), q.sqrt(q.add(q.mul(xs, xs), q.mul(us, us))));
        Value xsx = q.div(X, cplx(q, q.sel(q.gt(SX, q.f(0)), SX, q.f(1))));
        Value flip = q.land(q.gt(SX, q.f(0)), q.lt(q.add(q.mul(q.b.real(xsx), q.b.real(Y)), q.mul(q.b.imag(xsx), q.b.imag(Y))), q.f(0)));
        Y = q.sel(flip, q.neg(Y), Y);
        Value wilk = q.sel(q.ne(S, q.f(0)), q.sub(T, q.mul(U, q.div(U, q.add(X, Y)))), T);
        Value shift = q.sel(q.lor(ex10, ex20), ext, wilk);
        // Two small consecutive subdiagonals: the largest m in (L, I-1], else L.
        Value sh = q.bc(shift, vt);
        Value h22 = q.shift(d, -1);
        Value h11s = q.sub(d, sh);
        Value h21 = q.b.real(q.shift(sd, -1));
        Value Sm = q.add(cabs1(q, h11s), q.abs(h21));
        h11s = q.div(h11s, cplx(q, Sm));
        h21 = q.div(h21, Sm);
        Value h10 = q.b.real(sd);
        Value mcond = q.le(q.mul(q.abs(h10), q.abs(h21)), q.mul(vulp, q.mul(cabs1(q, h11s), q.add(ad, cabs1(q, h22)))));
        Value mval = q.land(q.land(q.gt(ix, q.vi(Ln)), q.le(ix, q.vi(q.sub(I, one)))), mcond);
        Value Mn = q.max(Ln, q.imax(q.sel(mval, ix, q.b.splat_int(ix.type, -1))));
        Value atM = q.eq(ix, q.vi(Mn));
        Value V1 = q.sum(q.sel(atM, h11s, q.zeros(vt))), V2 = cplx(q, q.sum(q.sel(atM, h21, zv)));
        Value I0 = q.sel(deflate, q.sub(Ln, one), I);
        Value L0 = q.sel(deflate, lo, Ln);
        Value its0 = q.sel(deflate, q.i(0), q.add(its, one));
        Value ph0 = q.sel(deflate, q.i(0), one);
        // ---- phase 1: one step of the sweep at row K ----
        Value Km1 = q.max(q.sub(K, one), q.i(0)), K1 = q.min(q.add(K, one), q.i(n - 1));
        Value first = q.eq(K, M);
        Value alpha = q.sel(first, s[8], q.get(H, K, Km1));
        Value x = q.sel(first, s[9], q.get(H, K1, Km1));
        // ?larfg (n = 2).
        Value ar = q.b.real(alpha), ai = q.b.imag(alpha), xn = q.abs(x);
        Value noref = q.land(q.eq(xn, q.f(0)), q.eq(ai, q.f(0)));
        Value beta = q.neg(q.sign(q.hypot(q.hypot(ar, ai), xn), ar));
        Value bs = q.sel(noref, q.f(1), beta);
        Value t1 = q.sel(noref, zc, q.b.complex(q.div(q.sub(bs, ar), bs), q.neg(q.div(ai, bs))));
        Value den = q.sel(noref, q.fz(1, cx), q.sub(alpha, cplx(q, beta)));
        Value v2 = q.sel(noref, x, q.div(x, den));
        Value betac = q.sel(noref, alpha, cplx(q, beta));
        Value H1 = q.sel(first, H, q.set(q.set(H, K, Km1, betac), K1, Km1, zc));
        Value vv = q.add(q.sel(q.eq(ix, q.vi(K)), q.b.splat_float(vt, 1.0), q.zeros(vt)),
                         q.sel(q.eq(ix, q.vi(q.add(K, one))), q.bc(v2, vt), q.zeros(vt)));
        Value vh = conj(q.b, vv);
        Value u = q.vecmat(vh, H1);
        H1 = q.sel(q.ge(col, q.mrow(K)), q.sub(H1, q.outer(q.mul(vv, q.bc(conj(q.b, t1), vt)), u)), H1);
        Value w = q.matvec(H1, vv);
        H1 = q.sel(q.le(row, q.mrow(q.min(q.add(K, two), I))), q.sub(H1, q.outer(q.mul(w, q.bc(t1, vt)), vh)), H1);
        Value Z1 = q.sub(Z, q.outer(q.mul(q.matvec(Z, vv), q.bc(t1, vt)), vh));
        // A sweep started below L: keep H(M, M-1) real.
        Value temp = q.sub(q.fz(1, cx), t1);
        Value atemp = q.abs(temp);
        temp = q.div(temp, cplx(q, q.sel(q.eq(atemp, q.f(0)), q.f(1), atemp)));
        Value tc = conj(q.b, temp);
        Value Mp1 = q.min(q.add(M, one), q.i(n - 1)), Mp2 = q.min(q.add(M, two), q.i(n - 1));
        Value Hs = q.set(H1, Mp1, M, q.mul(q.get(H1, Mp1, M), tc));
        Hs = q.sel(q.le(q.add(M, two), I), q.set(Hs, Mp2, Mp1, q.mul(q.get(Hs, Mp2, Mp1), temp)), Hs);
        Value inS = q.land(q.land(q.ge(ix, q.vi(M)), q.le(ix, q.vi(I))), q.ne(ix, q.vi(q.add(M, one))));
        Value rowS = q.as_cols(inS), colS = q.as_rows(inS);
        Hs = q.sel(q.land(rowS, q.gt(col, row)), q.mul(Hs, q.bc(temp, mt)), Hs);
        Hs = q.sel(q.land(colS, q.lt(row, col)), q.mul(Hs, q.bc(tc, mt)), Hs);
        Value Zs = q.sel(colS, q.mul(Z1, q.bc(tc, mt)), Z1);
        Value rescale = q.land(first, q.gt(M, L));
        H1 = q.sel(rescale, Hs, H1);
        Z1 = q.sel(rescale, Zs, Z1);
        // End of the sweep: make H(I, I-1) real.
        Value Kn = q.add(K, one);
        Value done = q.gt(Kn, q.sub(I, one));
        Value hl = q.get(H1, I, Im1);
        Value ahl = q.abs(hl);
        Value fix = q.land(done, q.ne(q.b.imag(hl), q.f(0)));
        Value tp = q.div(hl, cplx(q, q.sel(fix, ahl, q.f(1))));
        Value Hf = q.set(H1, I, Im1, cplx(q, ahl));
        Hf = q.sel(q.land(q.eq(row, q.mrow(I)), q.gt(col, q.mrow(I))), q.mul(Hf, q.bc(conj(q.b, tp), mt)), Hf);
        Hf = q.sel(q.land(q.eq(col, q.mrow(I)), q.lt(row, q.mrow(I))), q.mul(Hf, q.bc(tp, mt)), Hf);
        Value Zf = q.sel(q.eq(col, q.mrow(I)), q.mul(Z1, q.bc(tp, mt)), Z1);
        H1 = q.sel(fix, Hf, H1);
        Z1 = q.sel(fix, Zf, Z1);
        Value ph1 = q.sel(done, q.i(0), one);
        Value p0 = q.eq(phase, q.i(0));
        return Values{q.sel(p0, H0, H1), q.sel(p0, Z, Z1), q.sel(p0, I0, I), q.sel(p0, L0, L), q.sel(p0, its0, its),
                      q.sel(p0, ph0, ph1), q.sel(p0, Mn, Kn), q.sel(p0, Mn, M), q.sel(p0, V1, s[8]),
                      q.sel(p0, V2, s[9]), q.add(s[10], one), lo, hi};
      });
  return {out[0], out[1], c.ge(out[2], out[11])};
}

}  // namespace torch_tpu::ops::linalg::eig
