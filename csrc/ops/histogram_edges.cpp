// torch.histogram and torch.histogramdd (histogram.bin_ct, histogram.bins_tensor,
// _histogramdd_bin_edges, _histogramdd_from_bin_cts, _histogramdd_from_bin_tensors)
// as the CPU's kernel (aten/src/ATen/native/Histogram.cpp, cpu/HistogramKernel.cpp):
//  * equal-width edges: the outer edges are the range (or the data's min and
//    max per dimension, or [0, 1] for no data; an empty range widens by 0.5
//    each side), filled in with a linspace computed as the CPU's kernel does;
//  * an element's bin: for equal-width edges the interpolated position then
//    std::upper_bound over its neighbouring edges (the CPU's local search), for
//    given edges std::upper_bound over all of them, both emulated step by step
//    (so unsorted edges give the CPU's answer too); the rightmost bin holds its
//    right edge; out-of-range and NaN elements are dropped;
//  * counts (or weights) summed per bin; density divides by the total and by
//    each bin's widths.
// float32 and float64 are lowered; other dtypes run on the CPU (NotLowered).
// Shapes and host-side argument checks are in eager/meta_overrides/histogram_checks.cpp.
#include <cmath>
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using Dims = std::vector<int64_t>;

Value reduce_dim(Builder& b, const Value& x, int64_t dim, const Value& init, const char* op) {
  return b.reduce({x}, {init}, {dim}, [op](Builder& r, const Values& a) { return Values{r.binary(op, a[0], a[1])}; })[0];
}

void check_dtype(DType f) {
  if (f != DType::F32 && f != DType::F64) throw NotLowered("histogram: only float32 and float64 are lowered");
}

// v hidden from XLA's constant folding: its simplifier turns a division by a
// constant into a multiplication by the reciprocal, which rounds differently.

// a * x + c with one rounding (a fused multiply-add, as the CPU's compiled
// linspace computes it), from error-free transformations: Veltkamp/Dekker's
// exact product and Knuth's two-sum.
Value fma_unscaled(Builder& b, const Value& a, const Value& x, const Value& c) {
  const TensorType& t = a.type;
  double factor = t.dtype == DType::F64 ? 134217729.0 : 4097.0;  // 2^27 + 1, 2^12 + 1
  auto split = [&](const Value& v) {
    Value big = b.multiply(v, b.splat_float(t, factor));
    Value hi = b.subtract(big, b.subtract(big, v));
    return std::make_pair(hi, b.subtract(v, hi));
  };
  Value p = b.multiply(a, x);
  auto [ah, al] = split(a);
  auto [xh, xl] = split(x);
  Value err = b.add(b.add(b.add(b.subtract(b.multiply(ah, xh), p), b.multiply(ah, xl)), b.multiply(al, xh)),
                    b.multiply(al, xl));
  Value s = b.add(c, p);
  Value bb = b.subtract(s, c);
  Value tail = b.add(b.subtract(c, b.subtract(s, bb)), b.subtract(p, bb));
  return b.add(s, b.add(tail, err));
}

// The same for any finite a: Veltkamp's split overflows past |a| ~ max /
// factor (a step of 3e36 in float32 gave NaN edges), so a huge a and c go
// down by 2^-64 and the result back up, exact powers of two (c's bits lost
// to underflow there are far below the result's last bit; x = 0 gives c).
Value fma_emulated(Builder& b, const Value& a, const Value& x, const Value& c) {
  const TensorType& t = a.type;
  Value down = b.splat_float(t, std::ldexp(1.0, -64)), up = b.splat_float(t, std::ldexp(1.0, 64));
  Value scaled = b.multiply(fma_unscaled(b, b.multiply(a, down), x, b.multiply(c, down)), up);
  Value huge = b.compare(b.unary("abs", a), b.splat_float(t, t.dtype == DType::F64 ? 1e300 : 1e34), "GT");
  Value r = b.select(huge, scaled, fma_unscaled(b, a, x, c));
  return b.select(b.compare(x, b.splat_float(t, 0), "EQ"), c, r);
}

// torch.linspace(lo, hi, steps) in dtype f (lo, hi 0-d f values), as the CPU's
// kernel: step = (end - start) / (steps - 1), the first half start + step * k,
// the second end - step * (steps - 1 - k), each a fused multiply-add.
Value linspace(Builder& b, const Value& lo, const Value& hi, int64_t steps, DType f) {
  if (steps == 1) return b.broadcast_to(lo, {1});
  Value step = b.divide(b.subtract(hi, lo), b.opaque(b.constant_float(f, double(steps - 1))));
  TensorType it(DType::I64, {steps});
  Value k = b.iota(it, 0);
  // (opaque: folded at compile time, the emulation's steps would not round as written)
  Value st = b.opaque(b.broadcast_to(step, {steps}));
  Value fwd = fma_emulated(b, st, b.opaque(b.convert(k, f)), b.opaque(b.broadcast_to(lo, {steps})));
  Value back_n = b.opaque(b.convert(b.subtract(b.splat_int(it, steps - 1), k), f));
  Value bwd = fma_emulated(b, b.negate(st), back_n, b.opaque(b.broadcast_to(hi, {steps})));
  return b.select(b.compare(k, b.splat_int(it, steps / 2), "LT"), fwd, bwd);
}

// std::upper_bound(edges + first, edges + first + len, x) (libstdc++'s loop,
// `iters` rounds; enough for the longest `len`), elementwise: the index found.
Value upper_bound(Builder& b, const Value& edges, const Value& x, Value first, Value len, int iters) {
  const TensorType& it = first.type;
  int64_t k = edges.type.dims[0];
  Value zero = b.splat_int(it, 0), one = b.splat_int(it, 1), last = b.splat_int(it, k - 1);
  for (int i = 0; i < iters; ++i) {
    Value active = b.compare(len, zero, "GT");
    Value half = b.binary("shift_right_logical", len, one);
    Value mid = b.add(first, half);
    Value e = b.gather_elements_1d(edges, b.minimum(b.maximum(mid, zero), last));
    Value less = b.compare(x, e, "LT");
    Value len_less = half, first_ge = b.add(mid, one), len_ge = b.subtract(b.subtract(len, half), one);
    first = b.select(active, b.select(less, first, first_ge), first);
    len = b.select(active, b.select(less, len_less, len_ge), len);
  }
  return first;
}

int rounds_for(int64_t n) {
  int r = 0;
  while (n > 0) n >>= 1, ++r;
  return r + 1;
}

struct DimEdges {
  Value edges;          // [K] in the input dtype
  bool linear = false;  // equal-width: interpolation with local search
};

// The outer edges of dimension `d` of x [M, N] (0-d f values): the range if
// given, else the data's min and max (checked finite at run time), else [0, 1];
// an empty range widens by 0.5 each side.
std::pair<Value, Value> outer_edges(Builder& b, const Value& x, int64_t d, const std::vector<double>& range) {
  DType f = x.type.dtype;
  int64_t M = x.type.dims[0], N = x.type.dims[1];
  if (!range.empty()) {
    double lo = range.at(2 * d), hi = range.at(2 * d + 1);
    if (lo == hi) lo -= 0.5, hi += 0.5;
    return {b.constant_float(f, lo), b.constant_float(f, hi)};
  }
  if (M == 0) return {b.constant_float(f, 0), b.constant_float(f, 1)};
  Value col = b.reshape(b.slice(x, {0, d}, {M, d + 1}, {1, 1}), {M});
  Value lo = reduce_dim(b, col, 0, b.highest(f), "minimum");
  Value hi = reduce_dim(b, col, 0, b.lowest(f), "maximum");
  Value has_nan = reduce_dim(b, b.compare(col, col, "NE"), 0, b.constant_bool(false), "or");
  Value bad = b.binary("or", has_nan, b.unary("not", b.binary("and", b.is_finite(lo), b.is_finite(hi))));
  std::string msg = "torch.histogramdd: dimension " + std::to_string(d) + "'s range is not finite";
  (void)N;
  add_runtime_check(bad, CheckKind::Runtime, msg);
  Value same = b.compare(lo, hi, "EQ");
  Value half = b.constant_float(f, 0.5);
  return {b.select(same, b.subtract(lo, half), lo), b.select(same, b.add(hi, half), hi)};
}

DimEdges equal_width(Builder& b, const Value& x, int64_t d, int64_t bins, const std::vector<double>& range) {
  auto [lo, hi] = outer_edges(b, x, d, range);
  return DimEdges{linspace(b, lo, hi, bins + 1, x.type.dtype), true};
}

// The histogram of x [M, N] over per-dimension edges, with optional weight [M].
Value histogramdd(Builder& b, const Value& x, const std::vector<DimEdges>& edges, const Value* weight, bool density,
                  const TensorType& out) {
  DType f = x.type.dtype;
  int64_t M = x.type.dims[0], N = x.type.dims[1];
  int64_t total = out.numel();
  Value hist = b.splat_float(TensorType(f, {total}), 0);
  if (M > 0 && total > 0) {
    TensorType it(DType::I64, {M});
    Value keep = b.broadcast_to(b.constant_bool(true), {M});
    Value index = b.splat_int(it, 0);
    int64_t stride = total;
    for (int64_t d = 0; d < N; ++d) {
      const Value& e = edges[d].edges;
      int64_t K = e.type.dims[0];
      stride /= (K - 1);
      Value elt = b.reshape(b.slice(x, {0, d}, {M, d + 1}, {1, 1}), {M});
      Value left = b.slice(e, {0}, {1}, {1}), right = b.slice(e, {K - 1}, {K}, {1});
      Value l = b.broadcast_to(b.reshape(left, {}), {M}), r = b.broadcast_to(b.reshape(right, {}), {M});
      Value in = b.binary("and", b.compare(elt, l, "GE"), b.compare(elt, r, "LE"));
      keep = b.binary("and", keep, in);
      Value pos;
      if (edges[d].linear) {
        Value bins = b.splat_float(TensorType(f, {M}), double(K - 1));
        Value q = b.divide(b.multiply(b.subtract(elt, l), bins), b.opaque(b.subtract(r, l)));
        // Near the dtype's maximum (x - lo) * bins overflows (the CPU's kernel
        // then bins wrongly): the fraction first, the search below fixes +-1.
        Value q_small = b.multiply(b.divide(b.subtract(elt, l), b.opaque(b.subtract(r, l))), bins);
        q = b.select(b.is_finite(q), q, q_small);
        // (clamped into [0, K - 1] first: out-of-range and NaN elements are dropped anyway)
        q = b.select(b.binary("and", in, b.compare(q, q, "EQ")), q, b.splat_float(q.type, 0));
        q = b.minimum(b.maximum(q, b.splat_float(q.type, 0)), b.splat_float(q.type, double(K - 1)));
        Value p = b.convert(q, DType::I64);
        Value lo = b.maximum(b.splat_int(it, 0), b.subtract(p, b.splat_int(it, 1)));
        Value hi = b.minimum(b.add(p, b.splat_int(it, 2)), b.splat_int(it, K));
        pos = upper_bound(b, e, elt, lo, b.subtract(hi, lo), 3);
      } else {
        pos = upper_bound(b, e, elt, b.splat_int(it, 0), b.splat_int(it, K), rounds_for(K));
      }
      pos = b.subtract(pos, b.splat_int(it, 1));
      pos = b.select(b.compare(pos, b.splat_int(it, K - 1), "EQ"), b.splat_int(it, K - 2), pos);
      pos = b.minimum(b.maximum(pos, b.splat_int(it, 0)), b.splat_int(it, K - 2));
      index = b.add(index, b.multiply(pos, b.splat_int(it, stride)));
    }
    index = b.select(keep, index, b.splat_int(it, 0));
    Value w = weight ? b.convert(*weight, f) : b.splat_float(TensorType(f, {M}), 1);
    w = b.select(keep, w, b.splat_float(w.type, 0));
    hist = b.scatter_elements_1d(hist, index, w, "add");
  }
  hist = b.reshape(hist, out.dims);
  if (density) {
    Value sum = reduce_dim(b, b.reshape(hist, {total}), 0, b.constant_float(f, 0), "add");
    hist = b.divide(hist, b.broadcast_to(sum, out.dims));
    for (int64_t d = 0; d < N; ++d) {
      const Value& e = edges[d].edges;
      int64_t K = e.type.dims[0];
      Value width = b.subtract(b.slice(e, {1}, {K}, {1}), b.slice(e, {0}, {K - 1}, {1}));
      hist = b.divide(hist, b.broadcast_in_dim(b.opaque(width), out.dims, {d}));
    }
  }
  return hist;
}

// x (..., N) as [M, N] in its dtype; weight as [M].
Value as_points(Builder& b, const Value& x, int64_t N) {
  int64_t n = x.type.numel();
  return b.reshape(x, {N == 0 ? 0 : n / N, N});
}

const std::vector<double>& range_arg(const OpCall& c, size_t i) {
  static const std::vector<double> none;
  return c.arg(i).is_none() ? none : c.arg(i).doubles;
}

// histogram.bin_ct(self, int bins, *, float[]? range, Tensor? weight, bool density) -> (hist, bin_edges)
Values histogram_bin_ct_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  check_dtype(out.dtype);
  Value x = b.reshape(operand(c, v, 0), {operand(c, v, 0).type.numel(), 1});
  const Value* w = optional_operand(c, v, 3);
  Value wf;
  if (w) wf = b.reshape(*w, {w->type.numel()});
  std::vector<DimEdges> edges{equal_width(b, x, 0, c.arg(1).i, range_arg(c, 2))};
  Value hist = histogramdd(b, x, edges, w ? &wf : nullptr, c.arg(4).b, out);
  return {hist, edges[0].edges};
}

// histogram.bins_tensor(self, Tensor bins, *, Tensor? weight, bool density) -> (hist, bin_edges)
Values histogram_bins_tensor_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  check_dtype(out.dtype);
  Value x = b.reshape(operand(c, v, 0), {operand(c, v, 0).type.numel(), 1});
  const Value* w = optional_operand(c, v, 2);
  Value wf;
  if (w) wf = b.reshape(*w, {w->type.numel()});
  Value e = operand(c, v, 1);
  std::vector<DimEdges> edges{DimEdges{b.reshape(e, {e.type.numel()}), false}};
  Value hist = histogramdd(b, x, edges, w ? &wf : nullptr, c.arg(3).b, out);
  return {hist, edges[0].edges};
}

// _histogramdd_bin_edges(self, int[] bins, *, float[]? range, Tensor? weight, bool density) -> Tensor[]
Values histogramdd_bin_edges_rule(Builder& b, const OpCall& c, const Values& v) {
  const Value& self = operand(c, v, 0);
  check_dtype(self.type.dtype);
  int64_t N = self.type.dims.back();
  Value x = as_points(b, self, N);
  Values out;
  for (int64_t d = 0; d < N; ++d) out.push_back(equal_width(b, x, d, c.arg(1).ints.at(d), range_arg(c, 2)).edges);
  return out;
}

// _histogramdd_from_bin_cts(self, int[] bins, *, float[]? range, Tensor? weight, bool density) -> Tensor
Values histogramdd_from_bin_cts_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& self = operand(c, v, 0);
  check_dtype(self.type.dtype);
  int64_t N = self.type.dims.back();
  if (N == 0) throw NotLowered("histogramdd: a 0-dimensional histogram");
  Value x = as_points(b, self, N);
  std::vector<DimEdges> edges;
  for (int64_t d = 0; d < N; ++d) edges.push_back(equal_width(b, x, d, c.arg(1).ints.at(d), range_arg(c, 2)));
  const Value* w = optional_operand(c, v, 3);
  Value wf;
  if (w) wf = b.reshape(*w, {x.type.dims[0]});
  return {histogramdd(b, x, edges, w ? &wf : nullptr, c.arg(4).b, out)};
}

// _histogramdd_from_bin_tensors(self, Tensor[] bins, *, Tensor? weight, bool density) -> Tensor
Values histogramdd_from_bin_tensors_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& self = operand(c, v, 0);
  check_dtype(self.type.dtype);
  int64_t N = self.type.dims.back();
  if (N == 0) throw NotLowered("histogramdd: a 0-dimensional histogram");
  Value x = as_points(b, self, N);
  std::vector<DimEdges> edges;
  for (int op : c.arg(1).operands) {
    const Value& e = v.at(op);
    edges.push_back(DimEdges{b.reshape(e, {e.type.numel()}), false});
  }
  const Value* w = optional_operand(c, v, 2);
  Value wf;
  if (w) wf = b.reshape(*w, {x.type.dims[0]});
  return {histogramdd(b, x, edges, w ? &wf : nullptr, c.arg(3).b, out)};
}

TORCH_TPU_LOWERING("histogram.bin_ct", histogram_bin_ct_rule);
TORCH_TPU_LOWERING("histogram.bins_tensor", histogram_bins_tensor_rule);
TORCH_TPU_LOWERING("_histogramdd_bin_edges", histogramdd_bin_edges_rule);
TORCH_TPU_LOWERING("_histogramdd_from_bin_cts", histogramdd_from_bin_cts_rule);
TORCH_TPU_LOWERING("_histogramdd_from_bin_tensors", histogramdd_from_bin_tensors_rule);

}  // namespace
}  // namespace torch_tpu::ops
