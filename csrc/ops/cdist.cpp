// Pairwise p-norm distances, cdist (x1 [..., P, M], x2 [..., R, M] ->
// [..., P, R]) and its x1-gradient, as the CPU's Distance.cpp computes them:
// the direct form (every |x1_i - x2_j| reduced over M: p = 0 counts nonzeros,
// 1 sums, 2 takes the root of the sum of squares, inf the max, other p
// (sum |d|^p)^(1/p)), or, for p = 2 when the compute mode asks for it (mode 1,
// or mode 0 with more than 25 rows on a side), the matmul form
// sqrt(max(|x1|^2 + |x2|^2 - 2 x1 x2^T, 0)).
#include <cmath>
#include <limits>

#include "ops/elementwise_common.h"
#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

Value reduce_last(Builder& b, const Value& x, const char* op, double init) {
  int64_t last = x.type.rank() - 1;
  return b.reduce({x}, {b.constant_float(x.type.dtype, init)}, {last},
                  [op](Builder& r, const Values& a) { return Values{r.binary(op, a[0], a[1])}; })[0];
}

// x1 [B, P, M] -> [B, P, 1, M] and x2 [B, R, M] -> [B, 1, R, M], both broadcast to [B, P, R, M].
Value pairwise(Builder& b, const Value& x, const std::vector<int64_t>& full, bool first) {
  int64_t r = x.type.rank();
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < r - 2; ++i) dims.push_back(i);
  dims.push_back(first ? r - 2 : r - 1);
  dims.push_back(r);
  return b.broadcast_in_dim(x, full, dims);
}

std::vector<int64_t> pair_dims(const TensorType& out, int64_t m) {
  std::vector<int64_t> full = out.dims;  // [..., P, R]
  full.push_back(m);
  return full;
}

Value direct(Builder& b, const Value& x1, const Value& x2, const TensorType& out, double p) {
  int64_t m = x1.type.dims.back();
  std::vector<int64_t> full = pair_dims(out, m);
  Value d = b.unary("abs", b.subtract(pairwise(b, x1, full, true), pairwise(b, x2, full, false)));
  DType t = d.type.dtype;
  if (p == 0) return reduce_last(b, b.convert(b.compare(d, b.splat_float(d.type, 0), "NE"), t), "add", 0);
  if (p == 1) return reduce_last(b, d, "add", 0);
  if (p == 2) return b.unary("sqrt", reduce_last(b, b.multiply(d, d), "add", 0));
  if (std::isinf(p)) return reduce_last(b, d, "maximum", 0);
  Value s = reduce_last(b, b.binary("power", d, b.splat_float(d.type, p)), "add", 0);
  return b.binary("power", s, b.splat_float(s.type, 1.0 / p));
}

Value matmul_form(Builder& b, const OpCall& c, const Value& x1, const Value& x2) {
  int64_t r = x1.type.rank();
  Value n1 = reduce_last(b, b.multiply(x1, x1), "add", 0);  // [..., P]
  Value n2 = reduce_last(b, b.multiply(x2, x2), "add", 0);  // [..., R]
  std::vector<int64_t> batch;
  for (int64_t i = 0; i < r - 2; ++i) batch.push_back(i);
  std::vector<int64_t> out_dims(x1.type.dims.begin(), x1.type.dims.end() - 1);
  out_dims.push_back(x2.type.dims[r - 2]);
  std::string attr = "dot_dimension_numbers = #stablehlo.dot<";
  if (!batch.empty())
    attr += "lhs_batching_dimensions = " + hlo::int_list(batch) + ", rhs_batching_dimensions = " +
            hlo::int_list(batch) + ", ";
  attr += "lhs_contracting_dimensions = [" + std::to_string(r - 1) + "], rhs_contracting_dimensions = [" +
          std::to_string(r - 1) + "]>" + precision_config(c.matmul_precision, x1.type.dtype);
  Value xy = b.emit1("dot_general", {x1, x2}, attr, TensorType(x1.type.dtype, out_dims));
  std::vector<int64_t> keep1(batch), keep2(batch);
  keep1.push_back(r - 2);
  keep2.push_back(r - 1);
  Value sq = b.add(b.add(b.broadcast_in_dim(n1, out_dims, keep1), b.broadcast_in_dim(n2, out_dims, keep2)),
                   b.multiply(b.splat_float(xy.type, -2), xy));
  return b.unary("sqrt", b.maximum(sq, b.splat_float(sq.type, 0)));
}

void require_float(const OpCall& c, DType t) {
  if (t != DType::F32 && t != DType::F64)
    throw NotImplemented("cdist only supports floating-point dtypes, X1 got: " + std::string(hlo::dtype_name(t)));
}

// _cdist_forward(x1, x2, p, compute_mode)
TORCH_TPU_LOWERING("_cdist_forward", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  require_float(c, out.dtype);
  double p = c.arg(2).d;
  int64_t mode = c.arg(3).is_none() ? 0 : c.arg(3).i;
  std::vector<int64_t> batch(out.dims.begin(), out.dims.end() - 2);
  Value x1 = b.convert(operand(c, v, 0), out.dtype), x2 = b.convert(operand(c, v, 1), out.dtype);
  int64_t m = x1.type.dims.back();
  std::vector<int64_t> d1 = batch, d2 = batch;
  d1.insert(d1.end(), {x1.type.dims[x1.type.rank() - 2], m});
  d2.insert(d2.end(), {x2.type.dims[x2.type.rank() - 2], m});
  x1 = b.broadcast_to(x1, d1);
  x2 = b.broadcast_to(x2, d2);
  int64_t r1 = d1[d1.size() - 2], r2 = d2[d2.size() - 2];
  bool mm = p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
  if (m == 0) return Values{b.splat_float(out, 0)};
  return Values{mm ? matmul_form(b, c, x1, x2) : direct(b, x1, x2, out, p)};
});

// _cdist_backward(grad, x1, x2, p, cdist): the gradient for x1 (x2's comes
// from the same op with the roles swapped), per pair as Distance.cpp's
// backward kernels, summed over x2's rows.
TORCH_TPU_LOWERING("_cdist_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];  // x1's (batch-broadcast) shape
  require_float(c, out.dtype);
  double p = c.arg(3).d;
  Value grad = b.convert(operand(c, v, 0), out.dtype), dist = b.convert(operand(c, v, 4), out.dtype);
  const TensorType& dt = dist.type;  // [..., P, R]
  int64_t m = out.dims.back();
  std::vector<int64_t> batch(dt.dims.begin(), dt.dims.end() - 2);
  std::vector<int64_t> d1 = batch, d2 = batch;
  Value x1 = b.convert(operand(c, v, 1), out.dtype), x2 = b.convert(operand(c, v, 2), out.dtype);
  d1.insert(d1.end(), {x1.type.dims[x1.type.rank() - 2], m});
  d2.insert(d2.end(), {x2.type.dims[x2.type.rank() - 2], m});
  x1 = b.broadcast_to(x1, d1);
  x2 = b.broadcast_to(x2, d2);
  std::vector<int64_t> full = pair_dims(dt, m);
  if (p == 0 || m == 0 || dt.dims[dt.rank() - 1] == 0) return Values{b.reshape(b.splat_float(TensorType(out.dtype, d1), 0), out.dims)};
  Value diff = b.subtract(pairwise(b, x1, full, true), pairwise(b, x2, full, false));
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < dt.rank(); ++i) keep.push_back(i);
  Value g = b.broadcast_in_dim(grad, full, keep), dd = b.broadcast_in_dim(dist, full, keep);
  Value zero = b.splat_float(diff.type, 0), ad = b.unary("abs", diff), sgn = b.unary("sign", diff);
  Value dist_zero = b.compare(dd, zero, "EQ");
  Value term;
  if (p == 1) {
    term = b.multiply(g, sgn);
  } else if (std::isinf(p)) {
    term = b.multiply(b.multiply(g, sgn), b.convert(b.compare(ad, dd, "EQ"), diff.type.dtype));
  } else if (p == 2) {
    term = b.select(dist_zero, zero, b.divide(b.multiply(g, diff), dd));
  } else if (p < 2) {
    Value pm1 = b.splat_float(diff.type, p - 1);
    Value value = b.divide(b.multiply(b.multiply(sgn, b.binary("power", ad, pm1)), g), b.binary("power", dd, pm1));
    Value skip = p < 1 ? b.binary("or", dist_zero, b.compare(diff, zero, "EQ")) : dist_zero;
    term = b.select(skip, zero, value);
  } else {
    Value value = b.divide(b.multiply(b.multiply(diff, b.binary("power", ad, b.splat_float(diff.type, p - 2))), g),
                           b.binary("power", dd, b.splat_float(diff.type, p - 1)));
    term = b.select(dist_zero, zero, value);
  }
  int64_t r_axis = static_cast<int64_t>(full.size()) - 2;  // x2's rows
  Value summed = b.reduce({term}, {b.constant_float(term.type.dtype, 0)}, {r_axis},
                          [](Builder& r, const Values& a) { return Values{r.add(a[0], a[1])}; })[0];
  return Values{b.reshape(summed, out.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
