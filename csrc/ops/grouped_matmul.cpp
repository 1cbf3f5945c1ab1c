// _grouped_mm (the MoE expert product Transformers uses on tpu): groups are
// given by `offs`, the cumulative ends of each group along the grouped
// dimension, which are device values. Every group's product is computed for
// every row (E times the work of one product) and each row keeps its own
// group's result: static shapes, no host round trip. Rows past the last
// offset are zeros (the CPU leaves them uninitialized).
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using Dims = std::vector<int64_t>;

Value dot(Builder& b, MatmulPrecision precision, const Value& l, const Value& r, const Dims& lb, const Dims& rb, const Dims& lc,
          const Dims& rc, const Dims& result) {
  std::string attr = "dot_dimension_numbers = #stablehlo.dot<";
  if (!lb.empty())
    attr += "lhs_batching_dimensions = " + hlo::int_list(lb) + ", rhs_batching_dimensions = " + hlo::int_list(rb) + ", ";
  attr += "lhs_contracting_dimensions = " + hlo::int_list(lc) + ", rhs_contracting_dimensions = " + hlo::int_list(rc) +
          ">" + precision_config(precision, l.type.dtype);
  return b.emit1("dot_general", {l, r}, attr, TensorType(l.type.dtype, result));
}

// group[i] = number of offsets <= i for i in [0, n): the group index i falls
// in, or E (past the last offset).
Value group_of(Builder& b, const Value& offs, int64_t n) {
  int64_t e = offs.type.numel();
  Dims d{n, e};
  Value idx = b.iota(TensorType(DType::I64, d), 0);
  Value ends = b.broadcast_in_dim(b.convert(offs, DType::I64), d, {1});
  Value le = b.convert(b.compare(ends, idx, "LE"), DType::I64);
  return b.reduce({le}, {b.constant_int(DType::I64, 0)}, {1}, [](Builder& r, const Values& a) {
    return Values{r.add(a[0], a[1])};
  })[0];
}

// mask[g, i] = (group[i] == g), broadcast into `dims` with g at `g_dim` and i at `i_dim`.
Value group_mask(Builder& b, const Value& group, int64_t groups, const Dims& dims, int64_t g_dim, int64_t i_dim) {
  int64_t n = group.type.numel();
  Value g = b.iota(TensorType(DType::I64, {groups, n}), 0);
  Value m = b.compare(g, b.broadcast_in_dim(group, {groups, n}, {1}), "EQ");
  return b.broadcast_in_dim(m, dims, {g_dim, i_dim});
}

Value sum_over(Builder& b, const Value& x, int64_t dim) {
  return b.reduce({x}, {b.constant_float(x.type.dtype, 0)}, {dim}, [](Builder& r, const Values& a) {
    return Values{r.add(a[0], a[1])};
  })[0];
}

// Args: (self, mat2, offs?, bias?, out_dtype?).
Values grouped_mm_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!c.arg(3).is_none()) throw std::invalid_argument("_grouped_mm: bias is not supported");
  DType acc = compute_type(out.dtype);
  Value a = b.convert(operand(c, v, 0), acc), w = b.convert(operand(c, v, 1), acc);
  int64_t ra = a.type.rank(), rw = w.type.rank();
  Value zero = b.splat_float(out.with_dtype(acc), 0);
  if (out.numel() == 0) return {b.convert(zero, out.dtype)};
  Value r;
  if (ra == 3 && rw == 3) {  // one product per group, no offsets
    r = dot(b, c.matmul_precision, a, w, {0}, {0}, {2}, {1}, out.dims);
  } else {
    if (c.arg(2).is_none()) throw std::invalid_argument("_grouped_mm: offs is required unless both inputs are 3-d");
    const Value& offs = operand(c, v, 2);
    int64_t groups = offs.type.numel();
    if (ra == 2 && rw == 3) {  // rows of self grouped: out[S, N]
      int64_t s = a.type.dims[0], n = w.type.dims[2];
      Value all = dot(b, c.matmul_precision, a, w, {}, {}, {1}, {1}, {s, groups, n});  // [S, E, N]
      Value m = group_mask(b, group_of(b, offs, s), groups, {s, groups, n}, 1, 0);
      r = sum_over(b, b.select(m, all, b.splat_float(all.type, 0)), 1);
    } else if (ra == 3 && rw == 2) {  // columns of mat2 grouped: out[M, N]
      int64_t m_rows = a.type.dims[1], n = w.type.dims[1];
      Value all = dot(b, c.matmul_precision, a, w, {}, {}, {2}, {0}, {groups, m_rows, n});  // [E, M, N]
      Value m = group_mask(b, group_of(b, offs, n), groups, {groups, m_rows, n}, 0, 2);
      r = sum_over(b, b.select(m, all, b.splat_float(all.type, 0)), 0);
    } else if (ra == 2 && rw == 2) {  // the contracted dim grouped: out[E, M, N]
      int64_t m_rows = a.type.dims[0], k = a.type.dims[1];
      Dims d{groups, m_rows, k};
      Value m = group_mask(b, group_of(b, offs, k), groups, d, 0, 2);
      Value masked = b.select(m, b.broadcast_in_dim(a, d, {1, 2}), b.splat_float(TensorType(acc, d), 0));
      r = dot(b, c.matmul_precision, masked, w, {}, {}, {2}, {0}, out.dims);
    } else {
      throw std::invalid_argument("_grouped_mm: expected 2-d or 3-d inputs");
    }
  }
  return {b.convert(r, out.dtype)};
}

TORCH_TPU_LOWERING("_grouped_mm", grouped_mm_rule);

}  // namespace
}  // namespace torch_tpu::ops
