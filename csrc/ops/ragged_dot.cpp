// tpu::ragged_dot (jax.lax.ragged_dot) and its weight gradient: lhs [M, K]
// has its rows in G consecutive groups of group_sizes[g] rows (device values);
// group g's rows multiply rhs[g] ([K, N], or [N, K] with transpose_rhs, which
// reads Transformers' [E, out, in] expert weights and the lhs gradient's
// rhs^T one block at a time, never as a transposed copy of the whole tensor).
// Rows past sum(group_sizes) are zero.
//
// Work: never the dense G-times product. Two forms, chosen by the mean rows
// per group (M / G), both with no shape that depends on the group sizes:
//
// Few rows per group (M / G <= 8: decoding, where each expert gets a handful
// of tokens) and blocks [N, K] (transpose_rhs: Transformers' layout): one loop
// over the rows, each row a vector-matrix product with its group's block read
// in place. XLA's CPU backend fuses that product with the slices of the row
// and the block into one loop that reduces along the block's minor dimension
// (no block copy, no transpose), and a group costs exactly its rows. Measured
// on a decode-sized product (lhs [512, 256], 64 groups, [E, out, in] weights):
// 1.9 ms against 4.3 ms for the tiles below (bench/ragged_dot_forms.py). With
// [K, N] blocks the fused loop would reduce along the major dimension (15x
// slower): those keep the tiles, which need no transpose there.
//
// More rows per group: for each group g (an XLA while loop
// over g) its weight block is read once and its rows [lo_g, hi_g) are taken
// in tiles of T rows (an inner while loop: dynamic_slice at a runtime row).
// A group of s rows costs ceil(s / T) tiles, so the whole product is at most
// (M + G * (T - 1)) * K * N multiply-adds against the M * K * N of the ideal
// and the G * M * K * N of a masked dense product; T is about M / G (8..128),
// which keeps that within 2x of the ideal and the loop short. Tiles that
// straddle a group end are masked with select, so a row's result comes from
// exactly one tile. No shape depends on the group sizes: no host round trip.
//
// A capacity formulation (every group's first 2M/G rows in one batched
// dot_general, a loop for the rest; in the history of the branch that added
// this file) does 2M rows of work in one op, but measured 1.2-1.6x slower
// per Qwen3-MoE decode step on the XLA CPU plugin (bench/moe.py), its batched
// dot over [E, out, in] weights costing more than these per-block transposes.
#include <algorithm>
#include <functional>
#include <stdexcept>

#include "host_kernels/registry.h"
#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using Dims = std::vector<int64_t>;

// Rows per tile: about the mean group size, a power of two in [8, 128], at most M.
int64_t tile_rows(int64_t m, int64_t groups) {
  int64_t mean = (m + std::max<int64_t>(groups, 1) - 1) / std::max<int64_t>(groups, 1);
  int64_t t = 8;
  while (t < mean && t < 128) t *= 2;
  return std::min(t, m);
}

Value scalar_at(Builder& b, const Value& vec, const Value& i) {
  return b.reshape(b.dynamic_slice(vec, {i}, {1}), {});
}

Value index(Builder& b, int64_t v) { return b.constant_int(DType::I64, v); }

// [lo_g, hi_g): group g's rows, from the running sum of the sizes, within [0, M).
std::pair<Value, Value> group_rows(Builder& b, const Value& sizes, int64_t m) {
  int64_t g = sizes.type.numel();
  Value s = b.convert(sizes, DType::I64);
  Dims d{g, g};  // G is the number of experts: a [G, G] running sum is cheap
  Value upto = b.compare(b.iota(TensorType(DType::I64, d), 1), b.iota(TensorType(DType::I64, d), 0), "LE");
  Value terms = b.select(upto, b.broadcast_in_dim(s, d, {1}), b.splat_int(TensorType(DType::I64, d), 0));
  Value ends = b.reduce({terms}, {index(b, 0)}, {1}, [](Builder& r, const Values& a) {
    return Values{r.add(a[0], a[1])};
  })[0];
  TensorType vt(DType::I64, {g});
  auto clamp = [&](const Value& x) {
    return b.minimum(b.maximum(x, b.splat_int(vt, 0)), b.splat_int(vt, m));
  };
  Value lo = clamp(b.subtract(ends, s));
  return {lo, b.maximum(lo, clamp(ends))};
}

// Negative sizes have no meaning here (JAX gives an order-dependent result):
// a ValueError at the next synchronization.
void check_sizes(Builder& b, const Value& sizes, const std::string& op) {
  Value neg = b.compare(b.convert(sizes, DType::I64), b.splat_int(TensorType(DType::I64, sizes.type.dims), 0), "LT");
  Value any = b.reduce({neg}, {b.constant_bool(false)}, {0}, [](Builder& r, const Values& a) {
    return Values{r.binary("or", a[0], a[1])};
  })[0];
  add_runtime_check(any, CheckKind::Value, op + ": group_sizes must be non-negative");
}

Value dot(Builder& b, const OpCall& c, const Value& l, const Value& r, int64_t lc, int64_t rc, const Dims& dims,
          bool exact) {
  std::string attr = "dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [" + std::to_string(lc) +
                     "], rhs_contracting_dimensions = [" + std::to_string(rc) + "]>";
  if (!exact) attr += precision_config(c.matmul_precision, l.type.dtype);  // f32/f64 inputs (half ones are exact)
  return b.emit1("dot_general", {l, r}, attr, TensorType(l.type.dtype, dims));
}

using LoopBody = std::function<Values(Builder&, const Values&)>;

// while (carry[0] < carry[1]) carry = body(carry); returns the final carry.
// Everything the body reads travels in the carry (no implicit captures).
Values loop_while_less(Builder& b, const Values& init, const LoopBody& body) {
  std::vector<TensorType> types;
  for (const Value& v : init) types.push_back(v.type);
  return b.emit("stablehlo.while", init, "", types,
                {{types, [](Builder& r, const Values& a) { return Values{r.compare(a[0], a[1], "LT")}; }},
                 {types, body}});
}

// Rows [s, s + T) (s = min(r, M - T), so the window stays inside) and which
// of them lie in [r, hi): the tile's rows of the current group.
struct Tile {
  Value start, mask;
};
Tile tile_at(Builder& r, const Value& row, const Value& hi, int64_t m, int64_t t) {
  Value s = r.minimum(row, index(r, m - t));
  TensorType rows_t(DType::I64, {t});
  Value rows = r.add(r.iota(rows_t, 0), r.broadcast_in_dim(s, {t}, {}));
  Value in = r.binary("and", r.compare(rows, r.broadcast_in_dim(row, {t}, {}), "GE"),
                      r.compare(rows, r.broadcast_in_dim(hi, {t}, {}), "LT"));
  return {s, in};
}

// The row form (see the top of the file) while M / G is at most this.
constexpr int64_t kRowFormMaxRowsPerGroup = 8;

// Row r (r < hi[G-1], the rows in some group) times its group's [N, K] block:
// the group is the number of groups that end at or before r.
Value ragged_dot_by_rows(Builder& b, const OpCall& c, const Value& x, const Value& w, const Value& hi, bool exact) {
  const TensorType& out = c.outputs[0];
  int64_t m = x.type.dims[0], k = x.type.dims[1], groups = w.type.dims[0], n = out.dims[1];
  DType acc = compute_type(out.dtype);
  Dims mg{m, groups};
  Value ended = b.compare(b.broadcast_in_dim(hi, mg, {1}), b.iota(TensorType(DType::I64, mg), 0), "LE");
  Value group_of_row = b.reduce({b.convert(ended, DType::I64)}, {index(b, 0)}, {1}, [](Builder& r, const Values& a) {
    return Values{r.add(a[0], a[1])};
  })[0];
  Value rows = scalar_at(b, hi, index(b, groups - 1));
  Values loop = loop_while_less(b, {index(b, 0), rows, b.splat_float(out, 0), x, w, group_of_row},
                                [&](Builder& q, const Values& p) {
    const Value& r = p[0];
    Value g = scalar_at(q, p[5], r);
    Value xr = q.convert(q.reshape(q.dynamic_slice(p[3], {r, index(q, 0)}, {1, k}), {k}), acc);
    Value wg = q.convert(q.reshape(q.dynamic_slice(p[4], {g, index(q, 0), index(q, 0)}, {1, n, k}), {n, k}), acc);
    Value y = q.convert(dot(q, c, xr, wg, 0, 1, {n}, exact), out.dtype);
    Value o = q.dynamic_update_slice(p[2], q.reshape(y, {1, n}), {r, index(q, 0)});
    return Values{q.add(r, index(q, 1)), p[1], o, p[3], p[4], p[5]};
  });
  return loop[2];
}

// The row form's work as one call of the host kernel (csrc/host_kernels/
// ragged_dot_rows.cpp) where the plugin registered it: float32 or bfloat16,
// [N, K] blocks. Row-major layouts are pinned on every operand, as the kernel reads
// them. The negative-size check stays in the program.
bool host_kernel_takes(DType dtype) {
  return (dtype == DType::F32 || dtype == DType::BF16) && host_kernels::registered(host_kernels::kRaggedDotRows);
}

Value ragged_dot_host_kernel(Builder& b, const Value& x, const Value& w, const Value& sizes, const TensorType& out) {
  std::string attr = std::string("call_target_name = \"") + host_kernels::kRaggedDotRows +
                     "\", api_version = 4 : i32, backend_config = {}, operand_layouts = [dense<[1, 0]> : "
                     "tensor<2xindex>, dense<[2, 1, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>], "
                     "result_layouts = [dense<[1, 0]> : tensor<2xindex>]";
  return b.emit1("custom_call", {x, w, sizes}, attr, out);
}

void check_float(const OpCall& c, const TensorType& t, const char* what) {
  if (!hlo::is_float(t.dtype) || hlo::is_float8(t.dtype))
    throw std::invalid_argument(c.op + ": " + what + " must be a float16/bfloat16/float32/float64 tensor, got " +
                                t.str());
}

void check_int(const OpCall& c, const TensorType& t) {
  if (!hlo::is_integral(t.dtype))
    throw std::invalid_argument(c.op + ": group_sizes must be an integer tensor, got " + t.str());
}

// Args: (lhs [M, K], rhs [G, K, N] or [G, N, K], group_sizes [G], transpose_rhs).
Values ragged_dot_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = operand(c, v, 0), w = operand(c, v, 1), sizes = operand(c, v, 2);
  bool tr = c.arg(3).b;
  if (x.type.rank() != 2 || w.type.rank() != 3 || sizes.type.rank() != 1)
    throw std::invalid_argument(c.op + ": expected lhs [M, K], rhs [G, K, N] and group_sizes [G], got " +
                                x.type.str() + ", " + w.type.str() + ", " + sizes.type.str());
  check_float(c, x.type, "lhs");
  if (w.type.dtype != x.type.dtype) throw std::invalid_argument(c.op + ": lhs and rhs must have one dtype");
  int64_t m = x.type.dims[0], k = x.type.dims[1], groups = w.type.dims[0], n = out.dims[1];
  if ((tr ? w.type.dims[2] : w.type.dims[1]) != k || sizes.type.dims[0] != groups)
    throw std::invalid_argument(c.op + ": lhs [M, K] and rhs " + (tr ? "[G, N, K]" : "[G, K, N]") +
                                " disagree on K or group_sizes on G: " + x.type.str() + ", " + w.type.str() + ", " +
                                sizes.type.str());
  check_int(c, sizes.type);
  if (out.numel() == 0) return {b.splat_float(out, 0)};
  check_sizes(b, sizes, c.op);
  if (k == 0 || groups == 0) return {b.splat_float(out, 0)};
  DType acc = compute_type(out.dtype);
  bool exact = acc != x.type.dtype;
  bool decode_form = tr && m <= kRowFormMaxRowsPerGroup * groups;
  if (decode_form && host_kernel_takes(x.type.dtype)) return {ragged_dot_host_kernel(b, x, w, sizes, out)};
  auto [lo, hi] = group_rows(b, sizes, m);
  if (decode_form) return {ragged_dot_by_rows(b, c, x, w, hi, exact)};
  int64_t t = tile_rows(m, groups);
  // rhs is converted to `acc` one block at a time, inside the loop.
  Values outer = loop_while_less(
      b, {index(b, 0), index(b, groups), b.splat_float(out, 0), x, w, lo, hi},
      [&](Builder& r, const Values& a) {
        const Value &g = a[0], &xs = a[3], &ws = a[4];
        Dims block = tr ? Dims{1, n, k} : Dims{1, k, n};
        Value wg = r.convert(r.reshape(r.dynamic_slice(ws, {g, index(r, 0), index(r, 0)}, block), {block[1], block[2]}),
                             acc);
        // One transpose per group block: XLA's CPU dot is several times slower
        // with the contracted dimension last on both sides, once per tile.
        if (tr) wg = r.transpose(wg, {1, 0});
        Value row = scalar_at(r, a[5], g), end = scalar_at(r, a[6], g);
        Values inner = loop_while_less(r, {row, end, a[2], xs, wg}, [&](Builder& q, const Values& p) {
          Tile tile = tile_at(q, p[0], p[1], m, t);
          Value xt = q.convert(q.dynamic_slice(p[3], {tile.start, index(q, 0)}, {t, k}), acc);
          Value y = q.convert(dot(q, c, xt, p[4], 1, 0, {t, n}, exact), out.dtype);
          Value cur = q.dynamic_slice(p[2], {tile.start, index(q, 0)}, {t, n});
          Value keep = q.broadcast_in_dim(tile.mask, {t, n}, {0});
          Value o = q.dynamic_update_slice(p[2], q.select(keep, y, cur), {tile.start, index(q, 0)});
          return Values{q.add(p[0], index(q, t)), p[1], o, p[3], p[4]};
        });
        return Values{r.add(g, index(r, 1)), a[1], inner[2], xs, ws, a[5], a[6]};
      });
  return {outer[2]};
}

// Args: (lhs [M, K], grad [M, N], group_sizes [G], transpose_rhs): per group
// lhs_g^T @ grad_g, [G, K, N] (or grad_g^T @ lhs_g, [G, N, K]); empty groups are zero.
Values ragged_dot_weight_grad_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = operand(c, v, 0), dy = operand(c, v, 1), sizes = operand(c, v, 2);
  bool tr = c.arg(3).b;
  if (x.type.rank() != 2 || dy.type.rank() != 2 || sizes.type.rank() != 1 || x.type.dims[0] != dy.type.dims[0])
    throw std::invalid_argument(c.op + ": expected lhs [M, K], grad [M, N] and group_sizes [G], got " +
                                x.type.str() + ", " + dy.type.str() + ", " + sizes.type.str());
  check_float(c, x.type, "lhs");
  if (dy.type.dtype != x.type.dtype) throw std::invalid_argument(c.op + ": lhs and grad must have one dtype");
  int64_t m = x.type.dims[0], k = x.type.dims[1], n = dy.type.dims[1], groups = sizes.type.dims[0];
  check_int(c, sizes.type);
  if (out.numel() == 0) return {b.splat_float(out, 0)};
  check_sizes(b, sizes, c.op);
  if (m == 0) return {b.splat_float(out, 0)};
  DType acc = compute_type(out.dtype);
  bool exact = acc != x.type.dtype;
  int64_t t = tile_rows(m, groups);
  auto [lo, hi] = group_rows(b, sizes, m);
  Dims block = tr ? Dims{n, k} : Dims{k, n};
  Values outer = loop_while_less(
      b, {index(b, 0), index(b, groups), b.splat_float(out, 0), x, dy, lo, hi},
      [&](Builder& r, const Values& a) {
        const Value& g = a[0];
        Value row = scalar_at(r, a[5], g), end = scalar_at(r, a[6], g);
        Value zero = r.splat_float(TensorType(acc, block), 0);
        Values inner = loop_while_less(r, {row, end, zero, a[3], a[4]}, [&](Builder& q, const Values& p) {
          Tile tile = tile_at(q, p[0], p[1], m, t);
          auto rows = [&](const Value& src, int64_t width) {  // the tile's rows of src, others zero (NaN-safe)
            Value s = q.convert(q.dynamic_slice(src, {tile.start, index(q, 0)}, {t, width}), acc);
            return q.select(q.broadcast_in_dim(tile.mask, {t, width}, {0}), s, q.splat_float(s.type, 0));
          };
          Value xt = rows(p[3], k), dyt = rows(p[4], n);
          Value prod = tr ? dot(q, c, dyt, xt, 0, 0, block, exact) : dot(q, c, xt, dyt, 0, 0, block, exact);
          return Values{q.add(p[0], index(q, t)), p[1], q.add(p[2], prod), p[3], p[4]};
        });
        Value part = r.reshape(r.convert(inner[2], out.dtype), {1, block[0], block[1]});
        Value o = r.dynamic_update_slice(a[2], part, {g, index(r, 0), index(r, 0)});
        return Values{r.add(g, index(r, 1)), a[1], o, a[3], a[4], a[5], a[6]};
      });
  return {outer[2]};
}

TORCH_TPU_LOWERING("tpu::ragged_dot", ragged_dot_rule);
TORCH_TPU_LOWERING("tpu::ragged_dot_weight_grad", ragged_dot_weight_grad_rule);

}  // namespace
}  // namespace torch_tpu::ops
