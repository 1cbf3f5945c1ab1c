// SVD (_linalg_svd) from the symmetric (Hermitian) eigendecomposition of the
// augmented matrix H = [[0, A], [A^H, 0]] (linalg::eigh, XLA's Jacobi "Eigh"): its
// eigenvalues are +-sigma_i plus |m - n| zeros, and the eigenvector of +sigma_i
// is [u_i; v_i] / sqrt(2). Unlike eigh of A^T A this does not square the
// condition number, so singular values are accurate to eps * |A| and small
// ones keep their relative accuracy as LAPACK's do. The |m - n| zero-eigenvalue
// vectors are [w; 0] (or [0; z]) and complete U (or V) for full_matrices.
// Singular vectors are unique only up to sign (and, for repeated or zero
// singular values, up to rotation), as PyTorch documents.
#include <cmath>

#include "ops/linalg/common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

// x[..., r0:r1, c0:c1].
Value block(Builder& b, const Value& x, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  int64_t r = x.type.rank();
  std::vector<int64_t> start(r, 0), limit = x.type.dims, strides(r, 1);
  start[r - 2] = r0, limit[r - 2] = r1, start[r - 1] = c0, limit[r - 1] = c1;
  return b.slice(x, start, limit, strides);
}

Value reverse(Builder& b, const Value& x, int64_t dim) {
  return b.emit1("reverse", {x}, "dimensions = array<i64: " + std::to_string(dim) + ">", x.type);
}


TORCH_TPU_ACCEPTS_COMPLEX("_linalg_svd");

TORCH_TPU_LOWERING("_linalg_svd", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType &ut = c.outputs[0], &st = c.outputs[1], &vht = c.outputs[2];
  require_float32_or_64(c, st.dtype);
  bool full = c.arg(1).b, compute_uv = c.arg(2).b;
  Value a = operand(c, v, 0);
  int64_t r = a.type.rank(), m = a.type.dims[r - 2], n = a.type.dims[r - 1], k = std::min(m, n), N = m + n;
  auto square_or_zero = [&](const TensorType& t) {
    return numel(t) > 0 && t.rank() >= 2 && t.dims[t.rank() - 1] == t.dims[t.rank() - 2] ? identity(b, t) : b.splat_float(t, 0.0);
  };
  if (numel(a.type) == 0) return Values{square_or_zero(ut), b.splat_float(st, 0.0), square_or_zero(vht)};
  DType f = a.type.dtype;
  std::vector<int64_t> batch = batch_of(a.type);
  // LAPACK's gesdd refuses a matrix holding NaN (info -4), which the CPU
  // kernel raises; an infinite entry gives NaN singular values and vectors
  // there, where the Jacobi solver below would return finite ones.
  Value mag = magnitude(b, a);
  auto any_matrix = [&](const Value& flags) {
    return b.reduce({flags}, {b.constant_bool(false)}, {r - 2, r - 1},
                    [](Builder& rb, const Values& x) { return Values{rb.binary("or", x[0], x[1])}; })[0];
  };
  Value has_nan = any_matrix(b.compare(mag, mag, "NE"));
  TensorType it(DType::I32, batch);
  add_linalg_info_check(b.select(has_nan, b.splat_int(it, -4), b.splat_int(it, 0)), "linalg.svd");
  Value not_finite = any_matrix(b.unary("not", b.compare(mag, b.splat_float(mag.type, INFINITY), "LT")));
  auto nan_where_not_finite = [&](const Value& x) {
    std::vector<int64_t> keep;
    for (size_t d = 0; d < batch.size(); ++d) keep.push_back(static_cast<int64_t>(d));
    return b.select(b.broadcast_in_dim(not_finite, x.type.dims, keep), b.splat_float(x.type, NAN), x);
  };
  auto zeros = [&](int64_t rows, int64_t cols) {
    std::vector<int64_t> d = batch;
    d.push_back(rows), d.push_back(cols);
    return b.splat_float(TensorType(f, d), 0.0);
  };
  Value top = b.concatenate({zeros(m, m), a}, r - 1);
  Value bottom = b.concatenate({mH(b, a), zeros(n, n)}, r - 1);
  auto [z, w] = eigh(b, b.concatenate({top, bottom}, r - 2), true);
  // The k largest eigenvalues, descending; clamp the rounding of a zero sigma at 0.
  std::vector<int64_t> ws(r - 1, 0), wl = w.type.dims, wst(r - 1, 1);
  ws[r - 2] = N - k;
  Value s = reverse(b, b.slice(w, ws, wl, wst), r - 2);
  s = b.maximum(s, b.splat_float(s.type, 0.0));
  s = nan_where_not_finite(s);
  if (!compute_uv) return Values{b.splat_float(ut, 0.0), s, b.splat_float(vht, 0.0)};
  Value root2 = b.splat_float(TensorType(f, [&] { auto d = batch; d.push_back(N); d.push_back(k); return d; }()), std::sqrt(2.0));
  Value pairs = b.multiply(reverse(b, block(b, z, 0, N, N - k, N), r - 1), root2);
  Value u = block(b, pairs, 0, m, 0, k), vv = block(b, pairs, m, N, 0, k);
  if (full && m > n) u = b.concatenate({u, block(b, z, 0, m, k, N - k)}, r - 1);
  if (full && n > m) vv = b.concatenate({vv, block(b, z, m, N, k, N - k)}, r - 1);
  return Values{nan_where_not_finite(u), s, nan_where_not_finite(mH(b, vv))};
});

}  // namespace
}  // namespace torch_tpu::ops
