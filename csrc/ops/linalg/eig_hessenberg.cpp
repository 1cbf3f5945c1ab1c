// The general eigensolver's first and last stages (see eig.h): balancing as
// LAPACK's ?gebal with job 'B' (permutations isolating eigenvalues, then
// power-of-2 row/column scaling), the Householder reduction to Hessenberg
// form as ?gehd2 with the reflectors accumulated into Q (?orghr), and ?gebak.
#include "ops/linalg/eig.h"

namespace torch_tpu::ops::linalg::eig {

namespace {

// Swaps columns j and m over rows 0..l, then rows j and m over columns k..n-1
// (?gebal's exchange).
Value exchange(Ctx& c, const Value& a, const Value& j, const Value& m, const Value& k, const Value& l) {
  Value row = c.row(), col = c.col();
  Value rows_in = c.le(row, c.mrow(l));
  Value cj = c.as_cols(c.col_of(a, j)), cm = c.as_cols(c.col_of(a, m));
  Value a1 = c.sel(c.land(c.eq(col, c.mrow(m)), rows_in), cj, c.sel(c.land(c.eq(col, c.mrow(j)), rows_in), cm, a));
  Value cols_in = c.ge(col, c.mrow(k));
  Value rj = c.as_rows(c.row_of(a1, j)), rm = c.as_rows(c.row_of(a1, m));
  return c.sel(c.land(c.eq(row, c.mrow(m)), cols_in), rj, c.sel(c.land(c.eq(row, c.mrow(j)), cols_in), rm, a1));
}

}  // namespace

Balanced gebal(Ctx& c, const Value& a0) {
  const int64_t n = c.n;
  // Permutations: rows with no off-diagonal nonzero in columns 0..l go to
  // position l (searched from the bottom), then columns with no off-diagonal
  // nonzero in rows k..l go to position k (searched from the left).
  // Carry: a, scale, k, l, phase (0 rows, 1 columns, 2 done).
  Values perm = loop(
      c, {a0, c.b.splat_float(c.vec(c.r), 1.0), c.i(0), c.i(n - 1), c.i(0)},
      [](Ctx& q, const Values& s) { return q.lt(s[4], q.i(2)); },
      [n](Ctx& q, const Values& s) {
        const Value &a = s[0], &scale = s[1], &k = s[2], &l = s[3], &phase = s[4];
        Value row = q.row(), col = q.col(), ix = q.idx();
        Value nz = q.land(q.ne(a, q.zeros(a.type)), q.ne(row, col));
        Value row_any = q.any(q.land(nz, q.le(col, q.mrow(l))), 1);
        Value jr = q.imax(q.sel(q.land(q.lnot(row_any), q.le(ix, q.vi(l))), ix, q.b.splat_int(ix.type, -1)));
        Value in_kl = q.land(q.ge(row, q.mrow(k)), q.le(row, q.mrow(l)));
        Value col_any = q.any(q.land(nz, in_kl), 0);
        Value ccand = q.land(q.lnot(col_any), q.land(q.ge(ix, q.vi(k)), q.le(ix, q.vi(l))));
        Value jc = q.imin(q.sel(ccand, ix, q.b.splat_int(ix.type, n)));
        Value rows = q.eq(phase, q.i(0));
        Value found = q.sel(rows, q.ge(jr, q.i(0)), q.lt(jc, q.i(n)));
        Value j = q.sel(rows, jr, jc), m = q.sel(rows, l, k);
        Value js = q.sel(found, j, q.i(0)), ms = q.sel(found, m, q.i(0));
        Value a2 = q.sel(found, exchange(q, a, js, ms, k, l), a);
        Value scale2 = q.sel(found, q.vset(scale, ms, q.b.convert(js, q.r)), scale);
        Value one = q.i(1);
        // rows: found -> l-1 (done when l was 0); not found -> columns.
        // columns: found -> k+1; not found -> done.
        Value last = q.land(rows, q.land(found, q.eq(l, q.i(0))));
        Value l2 = q.sel(q.land(rows, q.land(found, q.gt(l, q.i(0)))), q.sub(l, one), l);
        Value k2 = q.sel(q.land(q.lnot(rows), found), q.add(k, one), k);
        Value phase2 = q.sel(found, q.sel(last, q.i(2), phase), q.add(phase, one));
        return Values{a2, scale2, k2, l2, phase2};
      });
  Value lo = perm[2], hi = perm[3];
  // Scaling (only when lo < hi; LAPACK then sets SCALE(lo..hi) = 1 first).
  Value ix = c.idx();
  Value in_lohi = c.land(c.ge(ix, c.vi(lo)), c.le(ix, c.vi(hi)));
  Value scale0 = c.sel(c.lt(lo, hi), c.sel(in_lohi, c.b.splat_float(c.vec(c.r), 1.0), perm[1]), perm[1]);
  double sfmin1 = c.safmin() / c.ulp(), sfmax1 = 1 / sfmin1, sfmin2 = sfmin1 * 2, sfmax2 = 1 / sfmin2;
  // Carry: a, scale, lo, hi, noconv.
  Values sweeps = loop(
      c, {perm[0], scale0, lo, hi, c.lt(lo, hi), c.i(0)},
      [](Ctx& q, const Values& s) { return q.land(s[4], q.lt(s[5], q.i(1000))); },
      [=](Ctx& q, const Values& s) {
        // One sweep over i = lo..hi. Carry: a, scale, i, hi, noconv, lo.
        Values in = loop(
            q, {s[0], s[1], s[2], s[3], q.t(false), s[2]}, [](Ctx& p, const Values& t) { return p.le(t[2], t[3]); },
            [=](Ctx& p, const Values& t) {
              const Value &a = t[0], &scale = t[1], &i = t[2], &hi = t[3], &lo = t[5];
              Value ix = p.idx();
              Value cv = p.col_of(a, i), rv = p.row_of(a, i);
              Value band = p.land(p.ge(ix, p.vi(lo)), p.le(ix, p.vi(hi)));
              Value acv = p.abs(cv), arv = p.abs(rv);  // moduli (real)
              Value rzero = p.zeros(acv.type);
              Value cs = p.sel(band, acv, rzero), rs = p.sel(band, arv, rzero);
              Value cn = p.nrm2(cs), rn = p.nrm2(rs);
              Value ca = p.reduce(p.sel(p.le(ix, p.vi(hi)), acv, rzero), {0}, "maximum", p.f(0));
              Value ra = p.reduce(p.sel(p.ge(ix, p.vi(lo)), arv, rzero), {0}, "maximum", p.f(0));
              Value s0 = p.add(cn, rn);
              // (LAPACK stops with an error on NaN; here a non-finite row/column is left alone)
              Value skip0 = p.lor(p.lor(p.eq(cn, p.f(0)), p.eq(rn, p.f(0))), p.ne(p.sub(s0, s0), p.f(0)));
              // Grow f while c < r / 2 (carry f, c, ca, r, g, ra, count).
              Values up = loop(
                  p, {p.f(1), cn, ca, rn, p.div(rn, p.f(2)), ra, p.i(0)},
                  [=](Ctx& z, const Values& u) {
                    Value stop = z.lor(z.ge(u[1], u[4]), z.lor(z.ge(z.max(u[0], z.max(u[1], u[2])), z.f(sfmax2)),
                                                            z.le(z.min(u[3], z.min(u[4], u[5])), z.f(sfmin2))));
                    Value tot = z.add(z.add(z.add(u[0], u[1]), z.add(u[2], u[3])), z.add(u[4], u[5]));
                    return z.land(z.lnot(stop), z.land(z.eq(tot, tot), z.lt(u[6], z.i(4200))));
                  },
                  [](Ctx& z, const Values& u) {
                    Value two = z.f(2);
                    return Values{z.mul(u[0], two), z.mul(u[1], two), z.mul(u[2], two), z.div(u[3], two),
                                  z.div(u[4], two), z.div(u[5], two), z.add(u[6], z.i(1))};
                  });
              // Shrink f while c / 2 >= r (carry f, c, g, ca, r, ra, count).
              Values down = loop(
                  p, {up[0], up[1], p.div(up[1], p.f(2)), up[2], up[3], up[5], p.i(0)},
                  [=](Ctx& z, const Values& u) {
                    Value stop = z.lor(z.lt(u[2], u[4]), z.lor(z.ge(z.max(u[4], u[5]), z.f(sfmax2)),
                                                            z.le(z.min(z.min(u[0], u[1]), z.min(u[2], u[3])), z.f(sfmin2))));
                    return z.land(z.lnot(stop), z.lt(u[6], z.i(4200)));
                  },
                  [](Ctx& z, const Values& u) {
                    Value two = z.f(2);
                    return Values{z.div(u[0], two), z.div(u[1], two), z.div(u[2], two), z.div(u[3], two),
                                  z.mul(u[4], two), z.mul(u[5], two), z.add(u[6], z.i(1))};
                  });
              Value f = down[0], cc = down[1], rr = down[4];
              Value si = p.vget(scale, i);
              Value one = p.f(1);
              Value skip = p.lor(skip0, p.ge(p.add(cc, rr), p.mul(p.f(0.95), s0)));
              skip = p.lor(skip, p.land(p.land(p.lt(f, one), p.lt(si, one)), p.le(p.mul(f, si), p.f(sfmin1))));
              skip = p.lor(skip, p.land(p.land(p.gt(f, one), p.gt(si, one)), p.ge(si, p.div(p.f(sfmax1), f))));
              Value doit = p.lnot(skip);
              Value g = p.div(one, f);
              Value row = p.row(), col = p.col();
              Value a1 = p.sel(p.land(p.bc(doit, row.type), p.land(p.eq(row, p.mrow(i)), p.ge(col, p.mrow(lo)))),
                               p.mul(a, p.bc(p.b.convert(g, a.type.dtype), a.type)), a);
              Value a2 = p.sel(p.land(p.bc(doit, row.type), p.land(p.eq(col, p.mrow(i)), p.le(row, p.mrow(hi)))),
                               p.mul(a1, p.bc(p.b.convert(f, a.type.dtype), a.type)), a1);
              Value scale2 = p.sel(doit, p.vset(scale, i, p.mul(si, f)), scale);
              return Values{a2, scale2, p.add(i, p.i(1)), hi, p.lor(t[4], doit), lo};
            });
        return Values{in[0], in[1], s[2], s[3], in[4], q.add(s[5], q.i(1))};
      });
  return {sweeps[0], sweeps[1], lo, hi};
}

std::pair<Value, Value> gehrd(Ctx& c, const Value& a0, const Value& lo, const Value& hi) {
  // Carry: a, q, i, hi. Column i's reflector for i = lo .. hi-2.
  Values out = loop(
      c, {a0, identity(c.b, a0.type), lo, hi}, [](Ctx& q, const Values& s) { return q.lt(s[2], q.sub(s[3], q.i(1))); },
      [](Ctx& q, const Values& s) {
        const Value &a = s[0], &qm = s[1], &i = s[2], &hi = s[3];
        Value ix = q.idx(), i1 = q.add(i, q.i(1));
        Value cv = q.col_of(a, i);
        Value alpha = q.get(a, i1, i);
        Value zc = q.zeros(cv.type);
        Value x = q.sel(q.land(q.ge(ix, q.vi(q.add(i, q.i(2)))), q.le(ix, q.vi(hi))), cv, zc);
        Value xnorm = q.nrm2(q.abs(x));
        // ?larfg: beta = -sign(|(alpha, x)|, re alpha) (real), tau = (beta - alpha) / beta,
        // v = x / (alpha - beta); no reflection (tau = 0) when x = 0 and alpha is real.
        DType t = a.type.dtype;
        bool cplx = hlo::is_complex(t);
        Value alphr = q.b.real(alpha), alphi = q.b.imag(alpha);
        Value beta = q.neg(q.sign(q.hypot(q.hypot(alphr, alphi), xnorm), alphr));
        Value zero_x = q.eq(xnorm, q.f(0));
        if (cplx) zero_x = q.land(zero_x, q.eq(alphi, q.f(0)));
        Value safe_beta = q.sel(zero_x, q.f(1), beta);
        Value tau = cplx ? q.b.complex(q.div(q.sub(beta, alphr), safe_beta), q.neg(q.div(alphi, safe_beta)))
                         : q.div(q.sub(beta, alpha), safe_beta);
        tau = q.sel(zero_x, q.fz(0, t), tau);
        Value beta_t = q.b.convert(beta, t);
        Value denom = q.sel(zero_x, q.fz(1, t), q.sub(alpha, beta_t));
        Value v = q.sel(q.eq(ix, q.vi(i1)), q.b.splat_float(x.type, 1.0), q.div(x, q.bc(denom, x.type)));
        beta_t = q.sel(zero_x, alpha, beta_t);
        Value row = q.row(), col = q.col();
        Value vh = conj(q.b, v);
        // From the right (A H, H = I - tau v v^H) on rows 0..hi, then H^H A on columns i+1..n-1.
        Value w = q.matvec(a, v);
        Value a1 = q.sel(q.le(row, q.mrow(hi)), q.sub(a, q.outer(q.mul(w, q.bc(tau, w.type)), vh)), a);
        Value u = q.vecmat(vh, a1);
        Value a2 = q.sel(q.gt(col, q.mrow(i)), q.sub(a1, q.outer(q.mul(v, q.bc(conj(q.b, tau), v.type)), u)), a1);
        Value below = q.land(q.eq(col, q.mrow(i)), q.gt(row, q.mrow(i1)));
        Value a3 = q.set(q.sel(below, q.zeros(a.type), a2), i1, i, beta_t);
        Value q2 = q.sub(qm, q.outer(q.mul(q.matvec(qm, v), q.bc(tau, v.type)), vh));
        return Values{a3, q2, i1, hi};
      });
  return {out[0], out[1]};
}

Value gebak(Ctx& c, const Value& v, const Value& scale, const Value& lo, const Value& hi) {
  Value ix = c.idx();
  Value in_lohi = c.land(c.ge(ix, c.vi(lo)), c.le(ix, c.vi(hi)));
  Value use = c.land(in_lohi, c.bc(c.lt(lo, hi), in_lohi.type));
  Value factor = c.sel(use, scale, c.b.splat_float(scale.type, 1.0));
  Value v1 = c.mul(v, c.as_cols(c.b.convert(factor, v.type.dtype)));
  // Row swaps i <-> SCALE(i) for i = lo-1 down to 0, then i = hi+1 .. n-1.
  Values out = loop(
      c, {v1, scale, lo, hi, c.i(0)}, [n = c.n](Ctx& q, const Values& s) { return q.lt(s[4], q.i(n)); },
      [](Ctx& q, const Values& s) {
        const Value &vv = s[0], &scale = s[1], &lo = s[2], &hi = s[3], &ii = s[4];
        Value inside = q.land(q.ge(ii, lo), q.le(ii, hi));
        Value i = q.sel(q.lt(ii, lo), q.sub(q.sub(lo, q.i(1)), ii), ii);
        Value isafe = q.sel(inside, q.i(0), i);
        Value kk = q.b.convert(q.vget(scale, isafe), DType::I64);
        kk = q.sel(inside, isafe, kk);
        Value row = q.row();
        Value ri = q.as_rows(q.row_of(vv, isafe)), rk = q.as_rows(q.row_of(vv, kk));
        Value v2 = q.sel(q.eq(row, q.mrow(isafe)), rk, q.sel(q.eq(row, q.mrow(kk)), ri, vv));
        return Values{v2, scale, lo, hi, q.add(ii, q.i(1))};
      });
  return out[0];
}

}  // namespace torch_tpu::ops::linalg::eig
