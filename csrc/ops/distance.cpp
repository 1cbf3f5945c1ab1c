// cdist and pdist (forward and backward) as the CPU's kernels compute them
// (aten/src/ATen/native/Distance.cpp, cpu/DistanceOpsKernel.cpp): per pair of
// rows, |a - b| mapped and reduced by the norm (p = 0: count of nonzero
// differences, 1: sum, 2: sqrt of the sum of squares, inf: maximum, else
// (sum |d|^p)^(1/p)); cdist's p = 2 on more than 25 rows (or compute_mode 1)
// takes the CPU's matrix-product path instead (|x1|^2 - 2 x1.x2 + |x2|^2,
// clamped at 0, square root). The backward formulas are the kernel's,
// zero-distance and zero-difference cases included.
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using Dims = std::vector<int64_t>;

int64_t prod(const Dims& d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t i = from; i < d.size() && i < to; ++i) n *= d[i];
  return n;
}

// A 1-D i64 constant.
Value const_i64(Builder& b, const Dims& v) {
  std::string s = "value = dense<[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  TensorType t(DType::I64, {int64_t(v.size())});
  return b.emit1("constant", {}, s + "]> : " + t.str(), t);
}

Value reduce_dim(Builder& b, const Value& x, int64_t dim, const Value& init, const char* op) {
  return b.reduce({x}, {init}, {dim}, [op](Builder& r, const Values& a) { return Values{r.binary(op, a[0], a[1])}; })[0];
}

// The kernel's float dtypes (AT_DISPATCH_FLOATING_TYPES): float32 and float64.
void check_dtype(const char* kernel, DType t) {
  if (t != DType::F32 && t != DType::F64) not_implemented_for(kernel, t);
}

// The norm of |differences| `d` (>= 0) over dimension `dim`.
Value reduce_norm(Builder& b, const Value& d, int64_t dim, double p) {
  DType f = d.type.dtype;
  Value zero = b.constant_float(f, 0);
  if (p == 0) {
    Value one = b.splat_float(d.type, 1);
    return reduce_dim(b, b.minimum(b.unary("ceil", d), one), dim, zero, "add");
  }
  if (p == 1) return reduce_dim(b, d, dim, zero, "add");
  if (p == 2) return b.unary("sqrt", reduce_dim(b, b.multiply(d, d), dim, zero, "add"));
  if (std::isinf(p)) return reduce_dim(b, d, dim, zero, "maximum");
  Value s = reduce_dim(b, b.binary("power", d, b.splat_float(d.type, p)), dim, zero, "add");
  return b.binary("power", s, b.splat_float(s.type, 1.0 / p));
}

// The kernel's gradient term for one difference (`diff`, with the pair's
// grad `g` and distance `dist` broadcast to its shape).
Value backward_term(Builder& b, const Value& diff, const Value& g, const Value& dist, double p) {
  const TensorType& t = diff.type;
  Value zero = b.splat_float(t, 0), one = b.splat_float(t, 1);
  Value sign = b.unary("sign", diff);
  Value dist_zero = b.compare(dist, zero, "EQ");
  if (p == 1) return b.multiply(g, sign);
  if (p < 2) {
    Value pm1 = b.splat_float(t, p - 1);
    Value r = b.divide(b.multiply(b.multiply(sign, b.binary("power", b.unary("abs", diff), pm1)), g),
                       b.binary("power", dist, pm1));
    r = b.select(dist_zero, zero, r);
    if (p < 1) r = b.select(b.compare(diff, zero, "EQ"), zero, r);
    return r;
  }
  if (p == 2) return b.select(dist_zero, zero, b.divide(b.multiply(g, diff), dist));
  if (std::isinf(p)) {
    Value m = b.minimum(one, b.unary("ceil", b.unary("abs", b.subtract(b.unary("abs", diff), dist))));
    return b.multiply(b.multiply(g, sign), b.subtract(one, m));
  }
  Value r = b.divide(b.multiply(b.multiply(diff, b.binary("power", b.unary("abs", diff), b.splat_float(t, p - 2))), g),
                     b.binary("power", dist, b.splat_float(t, p - 1)));
  return b.select(dist_zero, zero, r);
}

// Row-pair distances of x1 [B, r1, c] and x2 [B, r2, c]: [B, r1, r2].
Value pairwise(Builder& b, const Value& x1, const Value& x2, double p) {
  int64_t B = x1.type.dims[0], r1 = x1.type.dims[1], r2 = x2.type.dims[1], c = x1.type.dims[2];
  Dims full{B, r1, r2, c};
  Value a = b.broadcast_in_dim(x1, full, {0, 1, 3}), e = b.broadcast_in_dim(x2, full, {0, 2, 3});
  return reduce_norm(b, b.unary("abs", b.subtract(a, e)), 3, p);
}

// The gradient for x1 [B, r1, c] of distances to x2 [B, r2, c] with grad and
// dist [B, r1, r2]: the kernel's terms summed over x2's rows.
Value pairwise_backward(Builder& b, const Value& grad, const Value& x1, const Value& x2, const Value& dist, double p) {
  int64_t B = x1.type.dims[0], r1 = x1.type.dims[1], r2 = x2.type.dims[1], c = x1.type.dims[2];
  if (p == 0) return b.splat_float(x1.type, 0);
  Dims full{B, r1, r2, c};
  Value diff = b.subtract(b.broadcast_in_dim(x1, full, {0, 1, 3}), b.broadcast_in_dim(x2, full, {0, 2, 3}));
  Value g = b.broadcast_in_dim(grad, full, {0, 1, 2}), d = b.broadcast_in_dim(dist, full, {0, 1, 2});
  Value terms = backward_term(b, diff, g, d, p);
  // The CPU adds the terms in order of x2's rows (large terms of both signs
  // cancel for p < 1, so the order shows); kept for up to 128 rows.
  if (r2 > 128) return reduce_dim(b, terms, 2, b.constant_float(x1.type.dtype, 0), "add");
  Value acc;
  for (int64_t j = 0; j < r2; ++j) {
    Value t = b.reshape(b.slice(terms, {0, 0, j, 0}, {B, r1, j + 1, c}, {1, 1, 1, 1}), {B, r1, c});
    acc = j == 0 ? b.add(b.splat_float(t.type, 0), t) : b.add(acc, t);
  }
  return acc;
}

// x (batch dims..., r, c) expanded to the broadcast batch dims and flattened: [B, r, c].
Value expand_rows(Builder& b, const Value& x, const Dims& batch) {
  const Dims& d = x.type.dims;
  Dims want = batch;
  want.push_back(d[d.size() - 2]);
  want.push_back(d.back());
  return b.reshape(b.broadcast_to(x, want), {prod(batch), want[want.size() - 2], want.back()});
}

// The broadcast of x1's and x2's batch dims (all but the last two).
Dims broadcast_batch(const Dims& a, const Dims& b) {
  size_t na = a.size() - 2, nb = b.size() - 2, n = std::max(na, nb);
  Dims r(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i + na >= n ? a[i + na - n] : 1, y = i + nb >= n ? b[i + nb - n] : 1;
    r[i] = x == 1 ? y : x;
  }
  return r;
}

bool use_mm(double p, int64_t mode, int64_t r1, int64_t r2) {
  return p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
}

// Args: (x1, x2, float p, int? compute_mode).
Values cdist_forward_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType f = c.operands[c.arg(0).operand()].dtype;  // (an out= tensor may have another)
  double p = c.arg(2).d;
  int64_t mode = c.arg(3).is_none() ? 0 : c.arg(3).i;
  const Value& x1 = operand(c, v, 0);
  const Value& x2 = operand(c, v, 1);
  int64_t r1 = x1.type.dims[x1.type.rank() - 2], r2 = x2.type.dims[x2.type.rank() - 2], cols = x1.type.dims.back();
  Dims batch(out.dims.begin(), out.dims.end() - 2);
  if (out.numel() == 0) return {b.splat_float(out, 0)};
  if (cols == 0) return {b.splat_float(out, 0)};
  // Half types: the CPU's matrix-product path takes them (the CPU runs it), its kernel does not.
  if (f != DType::F32 && f != DType::F64 && use_mm(p, mode, r1, r2)) throw NotLowered("cdist: half types");
  check_dtype("cdist", f);
  Value a = expand_rows(b, b.convert(x1, f), batch), e = expand_rows(b, b.convert(x2, f), batch);
  int64_t B = prod(batch);
  Value r;
  if (use_mm(p, mode, r1, r2)) {
    // at::_euclidean_dist: [-2 x1, |x1|^2, 1] . [x2, 1, |x2|^2]^T, clamped at 0, square root.
    Value zero = b.constant_float(f, 0);
    Value n1 = b.reshape(reduce_dim(b, b.multiply(a, a), 2, zero, "add"), {B, r1, 1});
    Value n2 = b.reshape(reduce_dim(b, b.multiply(e, e), 2, zero, "add"), {B, r2, 1});
    Value a_ = b.concatenate({b.multiply(a, b.splat_float(a.type, -2)), n1, b.splat_float(n1.type, 1)}, 2);
    Value e_ = b.concatenate({e, b.splat_float(n2.type, 1), n2}, 2);
    std::string attr =
        "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
        "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>" +
        precision_config(c.matmul_precision, f);
    Value m = b.emit1("dot_general", {a_, e_}, attr, TensorType(f, {B, r1, r2}));
    r = b.unary("sqrt", b.maximum(m, b.splat_float(m.type, 0)));
  } else {
    r = pairwise(b, a, e, p);
  }
  return {b.convert(b.reshape(r, out.dims), out.dtype)};
}

// Args: (grad, x1, x2, float p, cdist). The gradient for x1, expanded to the
// broadcast batch dims; grad and cdist are read as [B, r1, r2] in order, as
// the CPU reads their contiguous data.
Values cdist_backward_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType f = c.operands[c.arg(1).operand()].dtype;
  const Value& x1 = operand(c, v, 1);
  const Value& x2 = operand(c, v, 2);
  double p = c.arg(3).d;
  int64_t r1 = x1.type.dims[x1.type.rank() - 2], r2 = x2.type.dims[x2.type.rank() - 2], cols = x1.type.dims.back();
  if (out.numel() == 0 || r2 == 0 || cols == 0) return {b.splat_float(out, 0)};
  Dims batch = broadcast_batch(x1.type.dims, x2.type.dims);
  int64_t B = prod(batch);
  if (B == 0 || r1 == 0) return {b.splat_float(out, 0)};
  check_dtype("cdist_backward", f);
  Value grad = operand(c, v, 0), dist = operand(c, v, 4);
  if (grad.type.numel() < B * r1 * r2 || dist.type.numel() < B * r1 * r2)
    throw std::invalid_argument("_cdist_backward: expected grad and cdist with " + std::to_string(B * r1 * r2) +
                                " elements (the distances' shape), got " + std::to_string(grad.type.numel()) +
                                " and " + std::to_string(dist.type.numel()));
  if (x2.type.dims.back() != cols)
    throw std::invalid_argument("_cdist_backward: X1 and X2 must have the same number of columns");
  // (the CPU reads the first B * r1 * r2 elements in order)
  auto lead = [&](const Value& t) {
    Value flat = b.reshape(b.convert(t, f), {t.type.numel()});
    if (flat.type.dims[0] != B * r1 * r2) flat = b.slice(flat, {0}, {B * r1 * r2}, {1});
    return b.reshape(flat, {B, r1, r2});
  };
  grad = lead(grad);
  dist = lead(dist);
  Value a = expand_rows(b, b.convert(x1, f), batch), e = expand_rows(b, b.convert(x2, f), batch);
  return {b.convert(b.reshape(pairwise_backward(b, grad, a, e, dist, p), out.dims), out.dtype)};
}

// The (i, j), i < j, row pairs in pdist's order.
void pairs(int64_t n, Dims& I, Dims& J) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) I.push_back(i), J.push_back(j);
}

// Rows idx of x [n, m]: [k, m].
Value rows(Builder& b, const Value& x, const Dims& idx) {
  int64_t n = x.type.dims[0], m = x.type.dims[1], k = idx.size();
  TensorType it(DType::I64, {k, m});
  Value base = b.broadcast_in_dim(b.multiply(const_i64(b, idx), b.splat_int(TensorType(DType::I64, {k}), m)), {k, m}, {0});
  return b.gather_elements_1d(b.reshape(x, {n * m}), b.add(base, b.iota(it, 1)));
}

// Args: (self, float p).
Values pdist_forward_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType f = c.operands[c.arg(0).operand()].dtype;
  Value x = operand(c, v, 0);
  if (out.numel() == 0) return {b.splat_float(out, 0)};
  if (x.type.rank() < 2) throw std::out_of_range("Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  int64_t n = x.type.dims[0], m = x.type.dims[1];
  if (n <= 1 || m == 0) return {b.splat_float(out, 0)};
  check_dtype("pdist", f);
  if (x.type.rank() != 2) throw std::invalid_argument("_pdist_forward: expected a 2D input, got " + std::to_string(x.type.rank()) + "D");
  x = b.convert(x, f);
  Dims I, J;
  pairs(n, I, J);
  Value d = b.unary("abs", b.subtract(rows(b, x, I), rows(b, x, J)));
  return {b.convert(b.reshape(reduce_norm(b, d, 1, c.arg(1).d), out.dims), out.dtype)};
}

// Args: (grad, self, float p, pdist). Each pair's term goes to row i and,
// negated (the terms are odd in the difference), to row j: the pairs are laid
// out as a symmetric [n, n] matrix with a zero diagonal and summed per row.
Values pdist_backward_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType f = c.operands[c.arg(1).operand()].dtype;
  check_dtype("pdist_backward", f);
  double p = c.arg(2).d;
  Value self = operand(c, v, 1);
  if (out.numel() == 0 || p == 0 || self.type.rank() < 2) return {b.splat_float(out, 0)};
  // The CPU reads self's first n * m values as the [n, m] matrix (all of a 2-d
  // self) and leaves the rest of the result 0.
  int64_t n = self.type.dims[0], m = self.type.dims[1];
  if (n <= 1 || m == 0) return {b.splat_float(out, 0)};
  Value x = b.reshape(b.convert(self, f), {out.numel()});
  if (n * m != out.numel()) x = b.slice(x, {0}, {n * m}, {1});
  x = b.reshape(x, {n, m});
  Dims I, J, ij, ji;
  pairs(n, I, J);
  int64_t k = I.size();
  Value grad = operand(c, v, 0), dist = operand(c, v, 3);
  if (grad.type.rank() == 0 || grad.type.dims[0] < k || dist.type.numel() < k)
    throw std::invalid_argument("_pdist_backward: expected grad and pdist with " + std::to_string(k) +
                                " values (one per pair of rows)");
  // grad[q, 0, ...] (the CPU steps through grad by its stride 0); pdist's first k values.
  {
    Dims lo(grad.type.rank(), 0), hi(grad.type.rank(), 1), st(grad.type.rank(), 1);
    hi[0] = k;
    grad = b.reshape(b.convert(b.slice(grad, lo, hi, st), f), {k});
  }
  dist = b.reshape(b.convert(dist, f), {dist.type.numel()});
  if (dist.type.dims[0] != k) dist = b.slice(dist, {0}, {k}, {1});
  for (int64_t q = 0; q < k; ++q) ij.push_back(I[q] * n + J[q]), ji.push_back(J[q] * n + I[q]);
  auto sym = [&](const Value& t) {
    Value z = b.splat_float(TensorType(f, {n * n}), 0);
    z = b.scatter_elements_1d(z, const_i64(b, ij), t);
    return b.reshape(b.scatter_elements_1d(z, const_i64(b, ji), t), {1, n, n});
  };
  Value xb = b.reshape(x, {1, n, m});
  Value g = b.reshape(pairwise_backward(b, sym(grad), xb, xb, sym(dist), p), {n * m});
  if (n * m != out.numel()) g = b.pad(g, b.constant_float(f, 0), {0}, {out.numel() - n * m}, {0});
  return {b.convert(b.reshape(g, out.dims), out.dtype)};
}

TORCH_TPU_LOWERING("_cdist_forward", cdist_forward_rule);
TORCH_TPU_LOWERING("_cdist_backward", cdist_backward_rule);
TORCH_TPU_LOWERING("_pdist_forward", pdist_forward_rule);
TORCH_TPU_LOWERING("_pdist_backward", pdist_backward_rule);

}  // namespace
}  // namespace torch_tpu::ops
