// Least squares (linalg_lstsq.out; the functional linalg_lstsq is PyTorch's
// composite over it), real or complex, for the CPU's four LAPACK drivers. The
// result sizes (which outputs are empty for a driver, the gelsd / gelss
// residuals only when every matrix has rank n) come from the meta override
// (eager/meta_overrides/lstsq.cpp); this rule fills them:
//
// * solution: for a matrix of full rank min(m, n) the solution is unique (the
//   minimum-norm one when m < n) and is computed as gels does: Householder QR
//   of A (m >= n; R x = (Q^H B)[:n]) or of A^H (m < n; x = Q (R^H)^-1 B),
//   with XLA's "Qr" / "ProductOfElementaryHouseholderReflectors" (LAPACK's
//   reflectors). For a rank-deficient matrix (gelsy, gelsd, gelss) it is the
//   minimum-norm solution of the rank-truncated problem from the SVD (the
//   _linalg_svd rule): V diag(1/s_i, s_i above the threshold) U^H B. gelsd and
//   gelss compute exactly that; gelsy (complete orthogonal factorization with
//   column pivoting) truncates by its own rank estimate, so for
//   rank-deficient input its solution is this SVD equivalent, not bit-for-bit
//   LAPACK's.
// * rank (not for gels): the number of singular values above the threshold,
//   LAPACK's: gelss rcond * s_max (eps for rcond < 0), gelsd rcond * s_max (eps
//   for rcond <= 0 or >= 1), gelsy rcond * s_max but at least 1 (gelsy
//   estimates the condition of its pivoted R11 instead, always keeping the
//   first column; equal for all but borderline matrices); an all zero matrix
//   has rank 0.
// * singular_values (gelsd, gelss): those of A, descending.
// * residuals (m > n; gels, or gelsd / gelss with full rank): the squared
//   norms of the last m - n rows of Q^H B, per column, as LAPACK leaves them.
// gels quirks kept: an all-zero A, or min(m, n) == 0, gives a zero solution and
// zero residuals; an exactly singular triangular factor is an error.
#include <cctype>
#include <cmath>
#include <limits>

#include "ops/linalg/common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

std::vector<int64_t> concat(std::vector<int64_t> a, std::initializer_list<int64_t> tail) {
  a.insert(a.end(), tail.begin(), tail.end());
  return a;
}

// x[..., r0:r1, c0:c1].
Value block(Builder& b, const Value& x, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  int64_t r = x.type.rank();
  std::vector<int64_t> start(r, 0), limit = x.type.dims, strides(r, 1);
  start[r - 2] = r0, limit[r - 2] = r1, start[r - 1] = c0, limit[r - 1] = c1;
  return b.slice(x, start, limit, strides);
}

Value upper_triangle(Builder& b, const Value& x) {
  int64_t r = x.type.rank();
  TensorType it(DType::I64, x.type.dims);
  return b.select(b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "LE"), x, b.splat_float(x.type, 0.0));
}

Value reduce_dim(Builder& b, const Value& x, int64_t dim, const char* op, double init) {
  Value zero = hlo::is_float(x.type.dtype) || hlo::is_complex(x.type.dtype) ? b.constant_float(x.type.dtype, init)
                                                                           : b.constant_int(x.type.dtype, (int64_t)init);
  return b.reduce({x}, {zero}, {dim}, [op](Builder& r, const std::vector<Value>& a) {
    return std::vector<Value>{r.binary(op, a[0], a[1])};
  })[0];
}

// |x|^2 elementwise, real.
Value abs2(Builder& b, const Value& x) {
  if (!hlo::is_complex(x.type.dtype)) return b.multiply(x, x);
  Value re = b.real(x), im = b.imag(x);
  return b.add(b.multiply(re, re), b.multiply(im, im));
}

// `pred` (batch) broadcast over the last two dims of `like`.
Value per_matrix(Builder& b, const Value& pred, const TensorType& like) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < pred.type.rank(); ++i) dims.push_back(i);
  return b.broadcast_in_dim(pred, like.dims, dims);
}

// A real (batch..., k) vector scaled into the rows of `x` (batch..., k, c).
Value scale_rows(Builder& b, const Value& x, const Value& s) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < s.type.rank(); ++i) dims.push_back(i);
  Value sb = b.broadcast_in_dim(s, x.type.dims, dims);
  if (hlo::is_complex(x.type.dtype)) sb = b.complex(sb, b.splat_float(sb.type, 0.0));
  return b.multiply(x, sb);
}

struct Svd {
  Value u, s, vh;
};

// The thin SVD of `a` through the _linalg_svd rule (linalg/svd.cpp).
Svd thin_svd(Builder& b, const Value& a) {
  const LoweringRule* rule = find_lowering("_linalg_svd");
  if (!rule) throw std::invalid_argument("linalg_lstsq: the SVD rule is not registered");
  int64_t r = a.type.rank(), m = a.type.dims[r - 2], n = a.type.dims[r - 1], k = std::min(m, n);
  std::vector<int64_t> batch = batch_of(a.type);
  OpCall c;
  c.op = "_linalg_svd";
  Arg t, full, uv, driver;
  t.kind = Arg::Kind::Tensor;
  t.operands = {0};
  full.kind = uv.kind = Arg::Kind::Bool;
  uv.b = true;
  c.args = {t, full, uv, driver};
  c.operands = {a.type};
  c.outputs = {TensorType(a.type.dtype, concat(batch, {m, k})),
               TensorType(hlo::complex_component(a.type.dtype), concat(batch, {k})),
               TensorType(a.type.dtype, concat(batch, {k, n}))};
  Values out = (*rule)(b, c, {a});
  return {out[0], out[1], out[2]};
}

struct QrSolve {
  Value x;          // (batch, n, nrhs)
  Value residuals;  // (batch, nrhs), m > n only
  Value singular;   // (batch): some diagonal entry of R is exactly zero
};

// gels: x minimizing |a x - rhs| for full-rank a (batch, m, n), m, n > 0.
QrSolve qr_solve(Builder& b, const Value& a, const Value& rhs) {
  int64_t r = a.type.rank(), m = a.type.dims[r - 2], n = a.type.dims[r - 1], nrhs = rhs.type.dims[r - 1];
  std::vector<int64_t> batch = batch_of(a.type);
  bool tall = m >= n;
  Value f = tall ? a : mH(b, a);  // (batch, p, q), p >= q
  int64_t p = tall ? m : n, q = tall ? n : m;
  Values qr = b.emit("custom_call", {f}, "call_target_name = \"Qr\"",
                     {f.type, TensorType(f.type.dtype, concat(batch, {q}))});
  Value rr = upper_triangle(b, block(b, qr[0], 0, q, 0, q));
  // diag(R) == 0 somewhere: LAPACK's trtrs reports it (info > 0).
  TensorType it(DType::I64, rr.type.dims);
  Value on_diag = b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "EQ");
  Value zero_diag = b.binary("and", on_diag, b.compare(rr, b.splat_float(rr.type, 0.0), "EQ"));
  Value any_zero = b.reduce({zero_diag}, {b.constant_bool(false)}, {r - 2, r - 1},
                            [](Builder& rb, const std::vector<Value>& v) { return std::vector<Value>{rb.binary("or", v[0], v[1])}; })[0];
  QrSolve out;
  out.singular = any_zero;
  if (tall) {
    // Q (m x m) from the n reflectors (the extra columns stay identity columns).
    Value refl = qr[0];
    if (m > n) {
      std::vector<int64_t> lo(r, 0), hi(r, 0), in(r, 0);
      hi[r - 1] = m - n;
      refl = b.pad(refl, b.constant_float(refl.type.dtype, 0.0), lo, hi, in);
    }
    Value q_full = b.emit1("custom_call", {refl, qr[1]},
                           "call_target_name = \"ProductOfElementaryHouseholderReflectors\"", refl.type);
    Value c = batched_matmul(b, mH(b, q_full), rhs);  // Q^H B (batch, m, nrhs)
    out.x = triangular_solve(b, rr, block(b, c, 0, n, 0, nrhs), true, false, false, OpA::None);
    if (m > n) out.residuals = reduce_dim(b, abs2(b, block(b, c, n, m, 0, nrhs)), r - 2, "add", 0.0);
  } else {
    // A^H = Q1 R: A = R^H Q1^H, minimum-norm x = Q1 (R^H)^-1 B.
    Value q1 = b.emit1("custom_call", {qr[0], qr[1]},
                       "call_target_name = \"ProductOfElementaryHouseholderReflectors\"", qr[0].type);
    Value y = triangular_solve(b, rr, rhs, true, false, false, OpA::Adjoint);
    out.x = batched_matmul(b, q1, y);
  }
  return out;
}

// eps of the computation's real type.
double epsilon(DType real) {
  return real == DType::F32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
}

TORCH_TPU_ACCEPTS_COMPLEX("linalg_lstsq.out");

TORCH_TPU_LOWERING("linalg_lstsq.out", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType &sol_t = c.outputs[0], &res_t = c.outputs[1], &rank_t = c.outputs[2], &sv_t = c.outputs[3];
  Value a = operand(c, v, 0), rhs_in = operand(c, v, 1);
  DType f = a.type.dtype;
  if (f != DType::F32 && f != DType::F64 && !hlo::is_complex(f))
    throw NotImplemented(std::string("\"linalg_lstsq_cpu\" not implemented for '") +
                         std::string(hlo::dtype_name(f)) + "'");
  DType real = hlo::complex_component(f);
  std::string driver = c.arg(3).is_none() ? "gelsy" : c.arg(3).s;
  for (char& ch : driver) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  int64_t r = a.type.rank(), m = a.type.dims[r - 2], n = a.type.dims[r - 1], k = std::min(m, n);
  double rcond = c.arg(2).is_none() ? epsilon(real) * static_cast<double>(std::max(m, n)) : c.arg(2).d;

  // The solution's batch and the right side as (batch, m, nrhs).
  bool vector_case = sol_t.rank() == r - 1;
  std::vector<int64_t> batch(sol_t.dims.begin(), sol_t.dims.begin() + (r - 2));
  int64_t nrhs = vector_case ? 1 : sol_t.dims.back();
  Value rhs = vector_case ? b.reshape(rhs_in, concat(rhs_in.type.dims, {1})) : rhs_in;
  rhs = b.broadcast_to(rhs, concat(batch, {m, nrhs}));
  Value ab = broadcast_batch(b, a, batch);
  TensorType x_t(f, concat(batch, {n, nrhs}));

  bool svd_driver = driver == "gelsd" || driver == "gelss";

  // Non-finite input, as the CPU's LAPACK (MKL) treats it: a NaN in A or B is
  // rejected as an illegal argument by every driver; an infinite entry of A
  // makes gels and gelsd (and gelss unless A is square) report a failure;
  // gelsy returns (non-finite values).
  auto any_of = [&](const Value& pred) {
    std::vector<int64_t> d;
    for (int64_t i = 0; i < pred.type.rank(); ++i) d.push_back(i);
    return b.reduce({pred}, {b.constant_bool(false)}, d, [](Builder& rb, const std::vector<Value>& t) {
      return std::vector<Value>{rb.binary("or", t[0], t[1])};
    })[0];
  };
  auto has_nan = [&](const Value& x) {
    Value mag = magnitude(b, x);
    return any_of(b.compare(mag, mag, "NE"));
  };
  if (numel(a.type) > 0 && numel(rhs_in.type) > 0) {
    add_runtime_check(b.binary("or", has_nan(a), has_nan(rhs_in)), CheckKind::Runtime,
                      "torch.linalg.lstsq: an input holds NaN: the LAPACK driver rejects it as an illegal value");
  }
  if (numel(a.type) > 0 && (driver == "gels" || driver == "gelsd" || (driver == "gelss" && m != n))) {
    Value mag = magnitude(b, a);
    Value inf = any_of(b.compare(mag, b.broadcast_in_dim(b.highest(mag.type.dtype), mag.type.dims, {}), "EQ"));
    add_runtime_check(inf, CheckKind::Runtime,
                      "torch.linalg.lstsq: The least squares solution could not be computed because the input "
                      "matrix has an infinite entry");
  }
  bool want_rank = numel(rank_t) > 0, want_sv = numel(sv_t) > 0, want_res = numel(res_t) > 0;

  // Rank and singular values of A (its own batch).
  Value s, rank, svd_full;
  Svd svd;
  bool have_svd = driver != "gels" && numel(a.type) > 0;
  if (have_svd) {
    svd = thin_svd(b, a);
    s = svd.s;
    Value smax = b.reduce({s}, {b.constant_float(real, 0.0)}, {r - 2}, [](Builder& rb, const std::vector<Value>& x) {
      return std::vector<Value>{rb.maximum(x[0], x[1])};
    })[0];
    double factor = rcond;
    if (driver == "gelsd" && (rcond <= 0 || rcond >= 1)) factor = epsilon(real);
    if (driver == "gelss" && rcond < 0) factor = epsilon(real);
    Value thr = b.multiply(smax, b.splat_float(smax.type, factor));
    if (driver == "gelss")
      thr = b.maximum(thr, b.splat_float(thr.type, real == DType::F32 ? std::numeric_limits<float>::min()
                                                                       : std::numeric_limits<double>::min()));
    std::vector<int64_t> bd;
    for (int64_t i = 0; i + 1 < s.type.rank(); ++i) bd.push_back(i);
    Value keep = b.binary("and", b.compare(s, b.broadcast_in_dim(thr, s.type.dims, bd), "GT"),
                        b.broadcast_in_dim(b.compare(smax, b.splat_float(smax.type, 0.0), "GT"), s.type.dims, bd));
    rank = reduce_dim(b, b.convert(keep, DType::I64), r - 2, "add", 0);
    if (driver == "gelsy") {
      // gelsy always keeps the first (pivot) column of a nonzero A: rank >= 1
      // whatever rcond; the solution then uses the truncated SVD as above.
      Value one = b.splat_int(rank.type, 1);
      Value nonzero = b.compare(smax, b.splat_float(smax.type, 0.0), "GT");
      rank = b.select(nonzero, b.maximum(rank, one), rank);
      if (k > 0) {
        Value first = b.compare(b.iota(TensorType(DType::I64, s.type.dims), r - 2), b.splat_int(TensorType(DType::I64, s.type.dims), 0), "EQ");
        keep = b.binary("or", keep, b.binary("and", first, b.broadcast_in_dim(nonzero, s.type.dims, bd)));
      }
    }
    // Reciprocals of the kept singular values (0 for the rest).
    Value safe = b.select(keep, s, b.splat_float(s.type, 1.0));
    svd_full = b.select(keep, b.divide(b.splat_float(s.type, 1.0), safe), b.splat_float(s.type, 0.0));
  }

  Value x = b.splat_float(x_t, 0.0);
  Value res;
  if (numel(x_t) > 0 && m > 0) {
    QrSolve qs = qr_solve(b, ab, rhs);
    Value xq = qs.x;
    if (driver == "gels") {
      // An all-zero A: LAPACK returns a zero solution (and zero residuals).
      Value amax = reduce_dim(b, reduce_dim(b, magnitude(b, ab), r - 1, "maximum", 0.0), r - 2, "maximum", 0.0);
      Value zero_a = b.compare(amax, b.splat_float(amax.type, 0.0), "EQ");
      Value bad = b.binary("and", qs.singular, b.unary("not", zero_a));
      Value any_bad = b.reduce({bad}, {b.constant_bool(false)}, [&] {
        std::vector<int64_t> d;
        for (int64_t i = 0; i < bad.type.rank(); ++i) d.push_back(i);
        return d;
      }(), [](Builder& rb, const std::vector<Value>& t) { return std::vector<Value>{rb.binary("or", t[0], t[1])}; })[0];
      add_runtime_check(any_bad, CheckKind::Runtime,
                        "torch.linalg.lstsq: The least squares solution could not be computed because the input "
                        "matrix does not have full rank.");
      x = b.select(per_matrix(b, zero_a, x_t), x, xq);
      if (m > n) {
        std::vector<int64_t> d;
        for (int64_t i = 0; i < zero_a.type.rank(); ++i) d.push_back(i);
        Value za = b.broadcast_in_dim(zero_a, qs.residuals.type.dims, d);
        res = b.select(za, b.splat_float(qs.residuals.type, 0.0), qs.residuals);
      }
    } else {
      // Rank-deficient matrices: V diag(1/s) U^H B, truncated.
      Value u = broadcast_batch(b, svd.u, batch), vh = broadcast_batch(b, svd.vh, batch);
      std::vector<int64_t> sdims = concat(batch, {k});
      Value inv = b.broadcast_to(svd_full, sdims);
      Value y = scale_rows(b, batched_matmul(b, mH(b, u), rhs), inv);
      Value xs = batched_matmul(b, mH(b, vh), y);
      Value full_rank = b.compare(b.broadcast_to(rank, batch), b.splat_int(TensorType(DType::I64, batch), k), "EQ");
      x = b.select(per_matrix(b, full_rank, x_t), xq, xs);
      if (m > n) res = qs.residuals;
    }
  } else if (want_res && n == 0 && svd_driver) {
    res = reduce_dim(b, abs2(b, rhs), r - 2, "add", 0.0);  // nothing solved: |B|^2
  }

  Values out;
  Value xo = vector_case ? b.reshape(x, sol_t.dims) : x;
  out.push_back(b.convert(xo, sol_t.dtype));
  out.push_back(want_res && !res.name.empty() ? b.convert(b.reshape(res, res_t.dims), res_t.dtype)
                                                : b.splat_float(res_t, 0.0));
  // gelsy returns at once, rank 0, when there is no right-hand side.
  if (want_rank && have_svd && !(driver == "gelsy" && nrhs == 0)) out.push_back(b.convert(b.reshape(rank, rank_t.dims), rank_t.dtype));
  else out.push_back(b.convert(b.splat_int(TensorType(DType::I64, rank_t.dims), 0), rank_t.dtype));
  if (want_sv && have_svd) out.push_back(b.convert(b.reshape(s, sv_t.dims), sv_t.dtype));
  else out.push_back(b.splat_float(sv_t, 0.0));
  return out;
});

}  // namespace
}  // namespace torch_tpu::ops
