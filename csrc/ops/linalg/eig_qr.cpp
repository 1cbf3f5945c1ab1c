// The general eigensolver's QR stage (see eig.h): LAPACK's ?lahqr (the
// routine ?hseqr uses below its crossover, n < 75) on rows/columns lo..hi of
// an upper Hessenberg matrix: Francis double-shift sweeps with Ahues and
// Tisseur's deflation test, the search for two small consecutive
// subdiagonals, exceptional shifts at the 10th and 20th sweep of an
// eigenvalue, and ?lanv2's standardization of each 2x2 block that splits off
// (complex pairs as [a b; c a] with b c < 0; real pairs made triangular).
// One while loop runs a state machine: each step either looks for a split
// (deflating a 1x1 or 2x2 block, or starting a sweep) or moves the bulge one
// row down; both are computed and the state picks one.
#include <algorithm>
#include <array>

#include "ops/linalg/eig.h"

namespace torch_tpu::ops::linalg::eig {

namespace {

struct Lanv2 {
  Value a, b, c, d, cs, sn;
};

// ?lanv2: the Schur factorization of a real 2x2 [a b; c d].
Lanv2 lanv2(Ctx& k, const Value& a, const Value& b, const Value& c, const Value& d) {
  Value zero = k.f(0), one = k.f(1), half = k.f(0.5);
  Value c0 = k.eq(c, zero), b0 = k.eq(b, zero);
  Value sb = k.sign(one, b), sc = k.sign(one, c);
  Value eq_diag = k.land(k.eq(k.sub(a, d), zero), k.ne(sb, sc));
  Value temp = k.sub(a, d), p = k.mul(half, temp);
  Value bcmax = k.max(k.abs(b), k.abs(c));
  Value bcmis = k.mul(k.mul(k.min(k.abs(b), k.abs(c)), sb), sc);
  Value scale = k.max(k.abs(p), bcmax);
  Value z = k.add(k.mul(k.div(p, scale), p), k.mul(k.div(bcmax, scale), bcmis));
  Value real = k.ge(z, k.f(4 * k.ulp()));
  // Real eigenvalues.
  Value zr = k.add(p, k.sign(k.mul(k.sqrt(scale), k.sqrt(z)), p));
  Value ar = k.add(d, zr), dr = k.sub(d, k.mul(k.div(bcmax, zr), bcmis));
  Value taur = k.hypot(c, zr);
  Value csr = k.div(zr, taur), snr = k.div(c, taur), br = k.sub(b, c);
  // Complex or nearly equal eigenvalues: make the diagonal equal.
  Value sigma = k.add(b, c);
  Value tau = k.hypot(sigma, temp);
  Value cs = k.sqrt(k.mul(half, k.add(one, k.div(k.abs(sigma), tau))));
  Value sn = k.mul(k.neg(k.div(p, k.mul(tau, cs))), k.sign(one, sigma));
  Value aa = k.add(k.mul(a, cs), k.mul(b, sn)), bb = k.add(k.mul(k.neg(a), sn), k.mul(b, cs));
  Value cc = k.add(k.mul(c, cs), k.mul(d, sn)), dd = k.add(k.mul(k.neg(c), sn), k.mul(d, cs));
  Value a2 = k.add(k.mul(aa, cs), k.mul(cc, sn)), b2 = k.add(k.mul(bb, cs), k.mul(dd, sn));
  Value c2 = k.add(k.mul(k.neg(aa), sn), k.mul(cc, cs)), d2 = k.add(k.mul(k.neg(bb), sn), k.mul(dd, cs));
  Value mid = k.mul(half, k.add(a2, d2));
  // ... then triangular if the eigenvalues came out real.
  Value c2nz = k.ne(c2, zero), b2nz = k.ne(b2, zero);
  Value same = k.eq(k.sign(one, b2), k.sign(one, c2));
  Value sab = k.sqrt(k.abs(b2)), sac = k.sqrt(k.abs(c2));
  Value p3 = k.sign(k.mul(sab, sac), c2);
  Value tau3 = k.div(one, k.sqrt(k.abs(k.add(b2, c2))));
  Value cs1 = k.mul(sab, tau3), sn1 = k.mul(sac, tau3);
  Value cs3 = k.sub(k.mul(cs, cs1), k.mul(sn, sn1)), sn3 = k.add(k.mul(cs, sn1), k.mul(sn, cs1));
  Value tri = k.land(c2nz, k.land(b2nz, same)), swap = k.land(c2nz, k.lnot(b2nz));
  Lanv2 cx;
  cx.a = k.sel(tri, k.add(mid, p3), mid);
  cx.d = k.sel(tri, k.sub(mid, p3), mid);
  cx.b = k.sel(tri, k.sub(b2, c2), k.sel(swap, k.neg(c2), b2));
  cx.c = k.sel(k.lor(tri, swap), zero, c2);
  cx.cs = k.sel(tri, cs3, k.sel(swap, k.neg(sn), cs));
  cx.sn = k.sel(tri, sn3, k.sel(swap, cs, sn));
  Lanv2 g;  // the general case
  g.a = k.sel(real, ar, cx.a);
  g.b = k.sel(real, br, cx.b);
  g.c = k.sel(real, zero, cx.c);
  g.d = k.sel(real, dr, cx.d);
  g.cs = k.sel(real, csr, cx.cs);
  g.sn = k.sel(real, snr, cx.sn);
  // Special cases: c = 0 (nothing), b = 0 (swap), equal diagonal with b c < 0 (nothing).
  Value keep = k.lor(c0, k.land(k.lnot(b0), eq_diag));
  Value sw = k.land(k.lnot(c0), b0);
  Lanv2 o;
  o.a = k.sel(keep, a, k.sel(sw, d, g.a));
  o.b = k.sel(keep, b, k.sel(sw, k.neg(c), g.b));
  o.c = k.sel(keep, c, k.sel(sw, zero, g.c));
  o.d = k.sel(keep, d, k.sel(sw, a, g.d));
  o.cs = k.sel(keep, one, k.sel(sw, zero, g.cs));
  o.sn = k.sel(keep, zero, k.sel(sw, one, g.sn));
  return o;
}

// ?larfg on (alpha, x2, x3): (beta, v2, v3, tau) with H (alpha x2 x3)^T = (beta 0 0)^T.
std::array<Value, 4> larfg3(Ctx& k, const Value& alpha, const Value& x2, const Value& x3) {
  Value xnorm = k.hypot(x2, x3);
  Value zx = k.eq(xnorm, k.f(0));
  Value beta = k.neg(k.sign(k.hypot(alpha, xnorm), alpha));
  Value tau = k.sel(zx, k.f(0), k.div(k.sub(beta, alpha), beta));
  Value den = k.sel(zx, k.f(1), k.sub(alpha, beta));
  return {k.sel(zx, alpha, beta), k.sel(zx, x2, k.div(x2, den)), k.sel(zx, x3, k.div(x3, den)), tau};
}

}  // namespace

Schur lahqr(Ctx& c, const Value& h0, const Value& z0, const Value& lo, const Value& hi) {
  const int64_t n = c.n;
  // Zero everything below the subdiagonal.
  Value h = c.sel(c.gt(c.row(), c.add(c.col(), c.mrow(c.i(1)))), c.zeros(h0.type), h0);
  const double ulp = c.ulp(), safmin = c.safmin();
  const int64_t cap = n * (30 * std::max<int64_t>(10, n) + 1) * (n + 2);
  // Carry: 0 h, 1 z, 2 I, 3 L, 4 its, 5 phase (0 search, 1 sweep), 6 K, 7 M,
  // 8-10 V (the first reflector's vector), 11 steps, 12 lo, 13 hi.
  Value zero_i = c.i(0);
  Values init{h, z0, hi, lo, zero_i, zero_i, zero_i, zero_i, c.f(0), c.f(0), c.f(0), zero_i, lo, hi};
  Values out = loop(
      c, init,
      [cap](Ctx& q, const Values& s) { return q.land(q.ge(s[2], s[12]), q.lt(s[11], q.i(cap))); },
      [=](Ctx& q, const Values& s) {
        const Value &H = s[0], &Z = s[1], &I = s[2], &L = s[3], &its = s[4], &phase = s[5], &K = s[6], &M = s[7];
        const Value &lo = s[12], &hi = s[13];
        Value one = q.i(1), two = q.i(2);
        Value row = q.row(), col = q.col(), ix = q.idx();
        Value zv = q.zeros(q.vec(q.r));
        Value smlnum = q.f(safmin * (1.0 / ulp));  // times nh below
        smlnum = q.mul(smlnum, q.b.convert(q.add(q.sub(hi, lo), one), q.r));
        Value fu = q.f(ulp);
        // ---- phase 0: look for a negligible subdiagonal in (L, I] ----
        Value d = q.diag(H), sd = q.subd(H), pd = q.supd(H);
        Value ad = q.abs(d), as = q.abs(sd), ap = q.abs(pd);
        Value adm1 = q.shift(ad, 1);
        Value tst = q.add(adm1, ad);
        Value extra = q.add(q.sel(q.ge(q.sub(ix, q.b.splat_int(ix.type, 2)), q.vi(lo)), q.shift(as, 1), zv),
                            q.sel(q.le(q.add(ix, q.b.splat_int(ix.type, 1)), q.vi(hi)), q.shift(as, -1), zv));
        tst = q.sel(q.eq(tst, zv), q.add(tst, extra), tst);
        Value ab = q.max(as, ap), ba = q.min(as, ap);
        Value dd = q.abs(q.sub(q.shift(d, 1), d));
        Value aa = q.max(ad, dd), bb = q.min(ad, dd);
        Value ss = q.add(aa, ab);
        Value vsml = q.bc(smlnum, zv.type), vulp = q.bc(fu, zv.type);
        Value ahues = q.le(q.mul(ba, q.div(ab, ss)), q.max(vsml, q.mul(vulp, q.mul(bb, q.div(aa, ss)))));
        Value negl = q.lor(q.le(as, vsml), q.land(q.le(as, q.mul(vulp, tst)), ahues));
        Value valid = q.land(q.gt(ix, q.vi(L)), q.le(ix, q.vi(I)));
        Value Ln = q.max(L, q.imax(q.sel(q.land(valid, negl), ix, q.b.splat_int(ix.type, -1))));
        Value Lsafe = q.max(Ln, one);
        Value H0 = q.sel(q.gt(Ln, lo), q.set(H, Ln, q.sub(Lsafe, one), q.f(0)), H);
        Value deflate = q.ge(Ln, q.sub(I, one));
        // Deflation of a 2x2 block at (I-1, I): ?lanv2 and its rotation.
        Value Im1 = q.max(q.sub(I, one), q.i(0));
        Lanv2 s2 = lanv2(q, q.get(H0, Im1, Im1), q.get(H0, Im1, I), q.get(H0, I, Im1), q.get(H0, I, I));
        Value Hd = q.set(q.set(q.set(q.set(H0, Im1, Im1, s2.a), Im1, I, s2.b), I, Im1, s2.c), I, I, s2.d);
        auto rot_rows = [&](const Value& m, const Value& mask_x, const Value& mask_y) {
          Value x = q.as_rows(q.row_of(m, Im1)), y = q.as_rows(q.row_of(m, I));
          Value cs = q.bc(s2.cs, m.type), sn = q.bc(s2.sn, m.type);
          Value nx = q.add(q.mul(cs, x), q.mul(sn, y)), ny = q.sub(q.mul(cs, y), q.mul(sn, x));
          return q.sel(mask_x, nx, q.sel(mask_y, ny, m));
        };
        auto rot_cols = [&](const Value& m, const Value& rows) {
          Value x = q.as_cols(q.col_of(m, Im1)), y = q.as_cols(q.col_of(m, I));
          Value cs = q.bc(s2.cs, m.type), sn = q.bc(s2.sn, m.type);
          Value nx = q.add(q.mul(cs, x), q.mul(sn, y)), ny = q.sub(q.mul(cs, y), q.mul(sn, x));
          return q.sel(q.land(rows, q.eq(col, q.mrow(Im1))), nx, q.sel(q.land(rows, q.eq(col, q.mrow(I))), ny, m));
        };
        Value right = q.gt(col, q.mrow(I));
        Hd = rot_rows(Hd, q.land(q.eq(row, q.mrow(Im1)), right), q.land(q.eq(row, q.mrow(I)), right));
        Hd = rot_cols(Hd, q.lt(row, q.mrow(Im1)));
        Value Zd = rot_cols(Z, q.eq(row, row));
        Value pair = q.eq(Ln, q.sub(I, one));
        Hd = q.sel(pair, Hd, H0);
        Zd = q.sel(pair, Zd, Z);
        // Otherwise the shifts (Francis double shift, exceptional at its 10 and 20).
        Value Im2 = q.max(q.sub(I, two), q.i(0));
        Value Ls1 = q.min(q.add(Ln, one), q.i(n - 1)), Ls2 = q.min(q.add(Ln, two), q.i(n - 1));
        Value ex20 = q.eq(its, q.i(20)), ex10 = q.eq(its, q.i(10));
        Value sI = q.add(q.abs(q.get(H0, I, Im1)), q.abs(q.get(H0, Im1, Im2)));
        Value sL = q.add(q.abs(q.get(H0, Ls1, Ln)), q.abs(q.get(H0, Ls2, Ls1)));
        Value exs = q.sel(ex20, sI, sL);
        Value exh11 = q.add(q.mul(q.f(0.75), exs), q.sel(ex20, q.get(H0, I, I), q.get(H0, Ln, Ln)));
        Value exc = q.lor(ex10, ex20);
        Value h11 = q.sel(exc, exh11, q.get(H0, Im1, Im1));
        Value h21 = q.sel(exc, exs, q.get(H0, I, Im1));
        Value h12 = q.sel(exc, q.mul(q.f(-0.4375), exs), q.get(H0, Im1, I));
        Value h22 = q.sel(exc, exh11, q.get(H0, I, I));
        Value S = q.add(q.add(q.abs(h11), q.abs(h12)), q.add(q.abs(h21), q.abs(h22)));
        Value S0 = q.eq(S, q.f(0));
        Value Ssafe = q.sel(S0, q.f(1), S);
        h11 = q.div(h11, Ssafe), h21 = q.div(h21, Ssafe), h12 = q.div(h12, Ssafe), h22 = q.div(h22, Ssafe);
        Value tr = q.div(q.add(h11, h22), q.f(2));
        Value det = q.sub(q.mul(q.sub(h11, tr), q.sub(h22, tr)), q.mul(h12, h21));
        Value rtdisc = q.sqrt(q.abs(det));
        Value cplx = q.ge(det, q.f(0));
        Value r1 = q.add(tr, rtdisc), r2 = q.sub(tr, rtdisc);
        Value pick1 = q.le(q.abs(q.sub(r1, h22)), q.abs(q.sub(r2, h22)));
        Value rreal = q.mul(q.sel(pick1, r1, r2), Ssafe);
        Value rt1r = q.sel(S0, q.f(0), q.sel(cplx, q.mul(tr, Ssafe), rreal));
        Value rt2r = rt1r;
        Value rt1i = q.sel(S0, q.f(0), q.sel(cplx, q.mul(rtdisc, Ssafe), q.f(0)));
        Value rt2i = q.neg(rt1i);
        // Two consecutive small subdiagonals: the largest m in (L, I-2] where
        // starting the sweep makes H(m, m-1) negligible, else L.
        Value d1 = q.shift(d, -1), s1 = q.shift(sd, -1), s2v = q.shift(sd, -2), p1 = q.shift(pd, -1);
        Value R1r = q.bc(rt1r, zv.type), R2r = q.bc(rt2r, zv.type), R1i = q.bc(rt1i, zv.type), R2i = q.bc(rt2i, zv.type);
        Value Sm = q.add(q.add(q.abs(q.sub(d, R2r)), q.abs(R2i)), q.abs(s1));
        Value h21s = q.div(s1, Sm);
        Value v1 = q.sub(q.add(q.mul(h21s, p1), q.mul(q.sub(d, R1r), q.div(q.sub(d, R2r), Sm))), q.mul(R1i, q.div(R2i, Sm)));
        Value v2 = q.mul(h21s, q.sub(q.sub(q.add(d, d1), R1r), R2r));
        Value v3 = q.mul(h21s, s2v);
        Value Sv = q.add(q.add(q.abs(v1), q.abs(v2)), q.abs(v3));
        v1 = q.div(v1, Sv), v2 = q.div(v2, Sv), v3 = q.div(v3, Sv);
        Value lhs = q.mul(as, q.add(q.abs(v2), q.abs(v3)));
        Value rhs = q.mul(vulp, q.mul(q.abs(v1), q.add(q.add(adm1, ad), q.abs(d1))));
        Value mval = q.land(q.land(q.gt(ix, q.vi(Ln)), q.le(ix, q.vi(q.sub(I, two)))), q.le(lhs, rhs));
        Value Mn = q.max(Ln, q.imax(q.sel(mval, ix, q.b.splat_int(ix.type, -1))));
        Value atM = q.eq(ix, q.vi(Mn));
        Value V1 = q.sum(q.sel(atM, v1, zv)), V2 = q.sum(q.sel(atM, v2, zv)), V3 = q.sum(q.sel(atM, v3, zv));
        // Phase 0's next state.
        Value I0 = q.sel(deflate, q.sub(Ln, one), I);
        Value L0 = q.sel(deflate, lo, Ln);
        Value its0 = q.sel(deflate, q.i(0), q.add(its, one));
        Value ph0 = q.sel(deflate, q.i(0), one);
        Value H0n = q.sel(deflate, Hd, H0), Z0n = q.sel(deflate, Zd, Z);
        // ---- phase 1: one bulge-chasing reflector at row K ----
        Value Km1 = q.max(q.sub(K, one), q.i(0));
        Value K1 = q.min(q.add(K, one), q.i(n - 1)), K2 = q.min(q.add(K, two), q.i(n - 1));
        Value nr3 = q.le(q.add(K, two), I);
        Value first = q.eq(K, M);
        Value x1 = q.sel(first, s[8], q.get(H, K, Km1));
        Value x2 = q.sel(first, s[9], q.get(H, K1, Km1));
        Value x3 = q.sel(nr3, q.sel(first, s[10], q.get(H, K2, Km1)), q.f(0));
        auto r = larfg3(q, x1, x2, x3);
        Value beta = r[0], w2 = r[1], w3 = q.sel(nr3, r[2], q.f(0)), t1 = r[3];
        Value H1 = H;
        Value chased = q.set(q.set(H1, K, Km1, beta), K1, Km1, q.f(0));
        chased = q.sel(q.lt(K, q.sub(I, one)), q.set(chased, K2, Km1, q.f(0)), chased);
        Value scaled = q.set(H1, K, Km1, q.mul(q.get(H1, K, Km1), q.sub(q.f(1), t1)));
        H1 = q.sel(first, q.sel(q.gt(M, L), scaled, H1), chased);
        Value vv = q.add(q.sel(q.eq(ix, q.vi(K)), q.b.splat_float(zv.type, 1.0), zv),
                         q.add(q.sel(q.eq(ix, q.vi(q.add(K, one))), q.bc(w2, zv.type), zv),
                               q.sel(q.eq(ix, q.vi(q.add(K, two))), q.bc(w3, zv.type), zv)));
        Value tv = q.mul(q.bc(t1, zv.type), vv);
        Value u = q.vecmat(vv, H1);
        H1 = q.sel(q.ge(col, q.mrow(K)), q.sub(H1, q.outer(tv, u)), H1);
        Value w = q.matvec(H1, vv);
        H1 = q.sel(q.le(row, q.mrow(q.min(q.add(K, q.i(3)), I))), q.sub(H1, q.outer(w, tv)), H1);
        Value Z1 = q.sub(Z, q.outer(q.matvec(Z, vv), tv));
        Value Kn = q.add(K, one);
        Value ph1 = q.sel(q.gt(Kn, q.sub(I, one)), q.i(0), one);
        // ---- pick ----
        Value p0 = q.eq(phase, q.i(0));
        return Values{q.sel(p0, H0n, H1), q.sel(p0, Z0n, Z1), q.sel(p0, I0, I), q.sel(p0, L0, L),
                      q.sel(p0, its0, its), q.sel(p0, ph0, ph1), q.sel(p0, Mn, Kn), q.sel(p0, Mn, M),
                      q.sel(p0, V1, s[8]), q.sel(p0, V2, s[9]), q.sel(p0, V3, s[10]), q.add(s[11], one), lo, hi};
      });
  return {out[0], out[1], c.ge(out[2], out[12])};
}

}  // namespace torch_tpu::ops::linalg::eig
