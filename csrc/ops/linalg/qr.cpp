// QR (linalg_qr, linalg_householder_product, geqrf, ormqr; real or complex) through the XLA custom calls "Qr" (Householder QR in
// LAPACK's geqrf layout: R above the diagonal, reflectors below, plus taus) and
// "ProductOfElementaryHouseholderReflectors" (orgqr). XLA's QrExpander rewrites
// both into plain HLO inside the compiler, on every backend, so no LAPACK call
// is made; the reflector convention is LAPACK's, so Q and R match the CPU's.
#include <algorithm>

#include "ops/linalg/common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

std::vector<int64_t> with_last(std::vector<int64_t> dims, std::initializer_list<int64_t> tail) {
  dims.insert(dims.end(), tail.begin(), tail.end());
  return dims;
}

// (packed QR, taus) of `a` (batch, m, n), m and n > 0.
std::pair<Value, Value> householder_qr(Builder& b, const Value& a) {
  int64_t r = a.type.rank(), m = a.type.dims[r - 2], n = a.type.dims[r - 1];
  TensorType tt(a.type.dtype, with_last(batch_of(a.type), {std::min(m, n)}));
  Values out = b.emit("custom_call", {a}, "call_target_name = \"Qr\"", {a.type, tt});
  return {out[0], out[1]};
}

// Q = H_1 ... H_k from reflectors (batch, m, n) and taus (batch, k), k <= n <= m.
Value householder_product(Builder& b, const Value& v, const Value& tau) {
  return b.emit1("custom_call", {v, tau}, "call_target_name = \"ProductOfElementaryHouseholderReflectors\"", v.type);
}

// x[..., :rows, :cols].
Value leading(Builder& b, const Value& x, int64_t rows, int64_t cols) {
  int64_t r = x.type.rank();
  std::vector<int64_t> start(r, 0), limit = x.type.dims, strides(r, 1);
  limit[r - 2] = rows;
  limit[r - 1] = cols;
  return b.slice(x, start, limit, strides);
}

Value upper_triangle(Builder& b, const Value& x) {
  int64_t r = x.type.rank();
  TensorType it(DType::I64, x.type.dims);
  return b.select(b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "LE"), x, b.splat_float(x.type, 0.0));
}

TORCH_TPU_ACCEPTS_COMPLEX("linalg_householder_product", "linalg_qr", "geqrf", "ormqr");

TORCH_TPU_LOWERING("linalg_householder_product", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  require_lapack_dtype(c, out.dtype);
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0)};
  Value tau = operand(c, v, 1);
  if (numel(tau.type) == 0) {  // no reflectors: the first n columns of I
    int64_t r = out.rank();
    TensorType it(DType::I64, out.dims);
    return Values{b.select(b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "EQ"), b.splat_float(out, 1.0), b.splat_float(out, 0.0))};
  }
  return Values{householder_product(b, operand(c, v, 0), tau)};
});

// mode: "reduced" (Q m x k, R k x n), "complete" (Q m x m, R m x n), "r" (no Q).
TORCH_TPU_LOWERING("linalg_qr", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType &qt = c.outputs[0], &rt = c.outputs[1];
  require_lapack_dtype(c, rt.dtype);
  Value a = operand(c, v, 0);
  int64_t r = a.type.rank(), m = a.type.dims[r - 2], n = a.type.dims[r - 1], k = std::min(m, n);
  auto eye = [&](const TensorType& t) {
    TensorType it(DType::I64, t.dims);
    int64_t tr = t.rank();
    return b.select(b.compare(b.iota(it, tr - 2), b.iota(it, tr - 1), "EQ"), b.splat_float(t, 1.0), b.splat_float(t, 0.0));
  };
  if (numel(a.type) == 0) {  // Q is the identity block, R is empty or zero
    Value q = (numel(qt) == 0 || qt.rank() < 2) ? b.splat_float(qt, 0.0) : eye(qt);
    return Values{q, b.splat_float(rt, 0.0)};
  }
  auto [qr, tau] = householder_qr(b, a);
  Value rr = upper_triangle(b, leading(b, qr, rt.dims[r - 2], n));
  if (numel(qt) == 0) return Values{b.splat_float(qt, 0.0), rr};
  int64_t qcols = qt.dims[r - 1];  // k (reduced) or m (complete)
  Value refl = leading(b, qr, m, k);
  if (qcols > k) {  // complete with m > n: extra columns are untouched identity columns
    std::vector<int64_t> lo(r, 0), hi(r, 0), in(r, 0);
    hi[r - 1] = qcols - k;
    refl = b.pad(refl, b.constant_float(a.type.dtype, 0.0), lo, hi, in);
  }
  return Values{householder_product(b, refl, tau), rr};
});

// geqrf: the packed QR and taus themselves (LAPACK's layout).
TORCH_TPU_LOWERING("geqrf", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType &at = c.outputs[0], &tt = c.outputs[1];
  require_lapack_dtype(c, at.dtype);
  Value a = operand(c, v, 0);
  if (numel(a.type) == 0) return Values{a, b.splat_float(tt, 0.0)};
  auto [qr, tau] = householder_qr(b, a);
  return Values{qr, tau};
});

// ormqr(reflectors, tau, other, left, transpose): op(Q) other (left) or
// other op(Q), Q = H_1 ... H_k the full m x m product, op(Q) = Q^H when
// `transpose` (LAPACK's ormqr / unmqr with 'C').
TORCH_TPU_LOWERING("ormqr", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  require_lapack_dtype(c, out.dtype);
  bool left = c.arg(3).b, transpose = c.arg(4).b;
  if (numel(out) == 0) return Values{b.splat_float(out, 0.0)};
  Value refl = operand(c, v, 0), tau = operand(c, v, 1), other = b.convert(operand(c, v, 2), out.dtype);
  int64_t r = refl.type.rank(), m = refl.type.dims[r - 2], cols = std::min(refl.type.dims[r - 1], m);
  TensorType qt(out.dtype, with_last(batch_of(refl.type), {m, m}));
  Value q;
  if (numel(tau.type) == 0) {
    TensorType it(DType::I64, qt.dims);
    q = b.select(b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "EQ"), b.splat_float(qt, 1.0), b.splat_float(qt, 0.0));
  } else {
    Value rf = leading(b, refl, m, cols);
    if (cols < m) {
      std::vector<int64_t> lo(r, 0), hi(r, 0), in(r, 0);
      hi[r - 1] = m - cols;
      rf = b.pad(rf, b.constant_float(rf.type.dtype, 0.0), lo, hi, in);
    }
    q = householder_product(b, rf, tau);
  }
  if (transpose) q = mH(b, q);
  return Values{left ? batched_matmul(b, q, other) : batched_matmul(b, other, q)};
});

}  // namespace
}  // namespace torch_tpu::ops
