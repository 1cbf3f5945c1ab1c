// General (non-symmetric) eigendecomposition: linalg_eig and _linalg_eigvals,
// real or complex input, natively, as LAPACK's ?geev (the CPU's kernel) computes it, so
// the eigenvalues come out in the CPU's order: balancing (?gebal 'B'),
// Hessenberg reduction, the small-matrix QR algorithm (?lahqr; ?hseqr's path
// below n = 75), eigenvectors by back-substitution on the Schur form, then
// ?gebak and ?geev's normalization (see eig.h and the eig_*.cpp stages). Each
// matrix of a batch is solved in turn inside one while loop; float32 runs in
// float32 / complex64 only. Eigenvalues are complex of the input's precision.
// Complex input follows zgeev (zlahqr's single-shift QR, ztrevc).
#include <cmath>

#include "ops/linalg/eig.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

// (eigenvalues (batch, n) complex, eigenvectors (batch, n, n) complex or none).
std::pair<Value, Value> geev(Builder& b, const OpCall& c, const Value& a, bool vectors) {
  bool cplx = hlo::is_complex(a.type.dtype);
  DType r = hlo::complex_component(a.type.dtype);
  int64_t rank = a.type.rank(), n = a.type.dims[rank - 1];
  int64_t batch = numel(a.type) / (n * n);
  eig::Ctx k{b, r, n};
  DType cx = k.cplx();
  Value x = b.reshape(a, {batch, n, n});
  TensorType wt(cx, {batch, n}), vt(cx, {batch, n, n});
  Values init{k.i(0), x, b.splat_float(wt, 0.0), b.splat_float(vt, 0.0), k.t(false)};
  Values out = eig::loop(
      k, init, [batch](eig::Ctx& q, const Values& s) { return q.lt(s[0], q.i(batch)); },
      [n, vectors, cplx](eig::Ctx& q, const Values& s) {
        const Value& idx = s[0];
        Value z0 = q.i(0);
        Value m = q.b.reshape(q.b.dynamic_slice(s[1], {idx, z0, z0}, {1, n, n}), {n, n});
        // A non-finite matrix is an error (checked below): solve zeros instead, so the loops end.
        Value fin = q.b.is_finite(q.b.real(m));
        if (cplx) fin = q.land(fin, q.b.is_finite(q.b.imag(m)));
        Value all_fin = q.reduce(fin, {0, 1}, "and", q.t(true));
        m = q.sel(all_fin, m, q.zeros(m.type));
        eig::Balanced bal = eig::gebal(q, m);
        auto [h, qm] = eig::gehrd(q, bal.a, bal.lo, bal.hi);
        eig::Schur sch = cplx ? eig::zlahqr(q, h, qm, bal.lo, bal.hi) : eig::lahqr(q, h, qm, bal.lo, bal.hi);
        Value w = cplx ? q.diag(sch.t) : eig::schur_eigenvalues(q, sch.t);
        // (eigvals of a non-finite matrix: NaN, as the CPU's LAPACK returns, rather than an error)
        Value nan = q.b.splat_float(q.vec(q.r), std::nan(""));
        w = q.sel(all_fin, w, q.b.complex(nan, nan));
        Value W = q.b.dynamic_update_slice(s[2], q.b.reshape(w, {1, n}), {idx, z0});
        Value V = s[3];
        if (vectors) {
          Value vecs = cplx ? eig::triangular_vectors(q, sch.t, sch.z, w) : eig::real_schur_vectors(q, sch.t, sch.z, w);
          vecs = eig::gebak(q, vecs, bal.scale, bal.lo, bal.hi);
          Value rotate = cplx ? q.eq(q.idx(), q.idx()) : q.ne(q.b.imag(w), q.zeros(q.vec(q.r)));
          vecs = eig::normalize(q, vecs, rotate, !cplx);
          V = q.b.dynamic_update_slice(V, q.b.reshape(vecs, {1, n, n}), {idx, z0, z0});
        }
        return Values{q.add(idx, q.i(1)), s[1], W, V, q.lor(s[4], sch.failed)};
      });
  // The CPU refuses non-finite input (its message), before LAPACK runs.
  Value finite = b.is_finite(b.real(x));
  if (cplx) finite = b.binary("and", finite, b.is_finite(b.imag(x)));
  Value all_finite = b.reduce({finite}, {b.constant_bool(true)}, {0, 1, 2},
                              [](Builder& rb, const Values& q) { return Values{rb.binary("and", q[0], q[1])}; })[0];
  if (vectors)
    add_runtime_check(b.unary("not", all_finite), CheckKind::Runtime,
                      std::string("torch.linalg.eig: input tensor should not contain infs or NaNs."));
  add_runtime_check(b.binary("and", all_finite, out[4]), CheckKind::Runtime,
                    c.op + ": The algorithm failed to converge because the input matrix is ill-conditioned or has "
                           "too many repeated eigenvalues");
  return {out[2], out[3]};
}

void check_input(const OpCall& c, const Value& a) {
  int64_t rank = a.type.rank();
  if (rank < 2 || a.type.dims[rank - 1] != a.type.dims[rank - 2])
    throw std::invalid_argument("linalg.eig: A must be batches of square matrices, but they are " +
                                (rank < 2 ? std::string("not matrices") : a.type.str()));
  require_lapack_dtype(c, a.type.dtype);
}

// Outputs are complex; complex input takes zgeev's path.
TORCH_TPU_ACCEPTS_COMPLEX("linalg_eig", "_linalg_eigvals");

TORCH_TPU_LOWERING("linalg_eig", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType &wt = c.outputs[0], &vt = c.outputs[1];
  Value a = operand(c, v, 0);
  check_input(c, a);
  if (numel(a.type) == 0) return Values{b.splat_float(wt, 0.0), b.splat_float(vt, 0.0)};
  auto [w, vecs] = geev(b, c, a, true);
  return Values{b.reshape(w, wt.dims), b.reshape(vecs, vt.dims)};
});

TORCH_TPU_LOWERING("_linalg_eigvals", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& wt = c.outputs[0];
  Value a = operand(c, v, 0);
  check_input(c, a);
  if (numel(a.type) == 0) return Values{b.splat_float(wt, 0.0)};
  auto [w, vecs] = geev(b, c, a, false);
  return Values{b.reshape(w, wt.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
