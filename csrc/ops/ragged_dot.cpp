// tpu::ragged_dot (jax.lax.ragged_dot) and its weight gradient: lhs [M, K]
// has its rows in G consecutive groups of group_sizes[g] rows (device values);
// group g's rows multiply rhs[g] ([K, N], or [N, K] with transpose_rhs, which
// reads Transformers' [E, out, in] expert weights and the lhs gradient's
// rhs^T without a transposed copy). Rows past sum(group_sizes) are zero.
//
// Work: never the dense G-times product (every group's weights for every
// row). Two parts, neither with a shape that depends on the sizes, so no host
// round trip:
//  * capacity: the first C rows of every group (C = 2 M / G rounded up to a
//    power of two, so G * C < 4 M + 8 G) are gathered into [G, C, K] and
//    multiplied by the weights in place in one batched dot_general;
//  * overflow: rows of a group beyond its first C (rare when routing is
//    balanced) in tiles of T rows, an XLA while loop over only the groups that
//    have them (weight block read once per group) and an inner loop over tiles.
// Products computed: at most (G * C + M + G * T) rows of K x N against the
// ideal M and the dense G * M. Rows outside a group are masked with select,
// so a row's result comes from exactly one place and NaNs elsewhere don't leak.
#include <algorithm>
#include <functional>
#include <utility>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using Dims = std::vector<int64_t>;

int64_t pow2_at_least(int64_t v, int64_t lo, int64_t hi) {
  int64_t p = lo;
  while (p < v && p < hi) p *= 2;
  return p;
}
int64_t mean_group(int64_t m, int64_t groups) { return (m + groups - 1) / groups; }
// Rows per group in the batched part: twice the mean group size.
int64_t capacity(int64_t m, int64_t groups) {
  return std::min(pow2_at_least(2 * mean_group(m, groups), 8, int64_t{1} << 40), m);
}
// Rows per overflow tile: about the mean group size, in [8, 128].
int64_t tile_rows(int64_t m, int64_t groups) { return std::min(pow2_at_least(mean_group(m, groups), 8, 128), m); }

Value index(Builder& b, int64_t v) { return b.constant_int(DType::I64, v); }
Value splat_index(Builder& b, const Dims& dims, int64_t v) { return b.splat_int(TensorType(DType::I64, dims), v); }
Value scalar_at(Builder& b, const Value& vec, const Value& i) { return b.reshape(b.dynamic_slice(vec, {i}, {1}), {}); }

Value sum_i64(Builder& b, const Value& x, int64_t dim) {
  return b.reduce({x}, {index(b, 0)}, {dim}, [](Builder& r, const Values& a) { return Values{r.add(a[0], a[1])}; })[0];
}

// Group g's rows [lo_g, hi_g) from the running sum of the sizes, within [0, M).
struct Groups {
  Value lo, hi;
  int64_t count, m;
};
Groups group_rows(Builder& b, const Value& sizes, int64_t m) {
  int64_t g = sizes.type.numel();
  Value s = b.convert(sizes, DType::I64);
  Dims d{g, g};  // G is the number of experts: a [G, G] running sum is cheap
  Value upto = b.compare(b.iota(TensorType(DType::I64, d), 1), b.iota(TensorType(DType::I64, d), 0), "LE");
  Value ends = sum_i64(b, b.select(upto, b.broadcast_in_dim(s, d, {1}), splat_index(b, d, 0)), 1);
  auto clamp = [&](const Value& x) { return b.minimum(b.maximum(x, splat_index(b, {g}, 0)), splat_index(b, {g}, m)); };
  Value lo = clamp(b.subtract(ends, s));
  return {lo, b.maximum(lo, clamp(ends)), g, m};
}

// Negative sizes have no meaning here (JAX's result depends on their order):
// a ValueError at the next synchronization.
void check_sizes(Builder& b, const Value& sizes, const std::string& op) {
  Value neg = b.compare(b.convert(sizes, DType::I64), splat_index(b, sizes.type.dims, 0), "LT");
  Value any = b.reduce({neg}, {b.constant_bool(false)}, {0}, [](Builder& r, const Values& a) {
    return Values{r.binary("or", a[0], a[1])};
  })[0];
  add_runtime_check(any, CheckKind::Value, op + ": group_sizes must be non-negative");
}

// The capacity windows: row lo_g + c of every group (clamped inside lhs) and
// whether it belongs to group g.
struct Windows {
  Value rows;   // [G * C] i64
  Value valid;  // [G, C] i1
  int64_t cap;
};
Windows windows(Builder& b, const Groups& gr, int64_t cap) {
  Dims d{gr.count, cap};
  Value r = b.add(b.broadcast_in_dim(gr.lo, d, {0}), b.iota(TensorType(DType::I64, d), 1));
  Value valid = b.compare(r, b.broadcast_in_dim(gr.hi, d, {0}), "LT");
  Value clamped = b.minimum(r, splat_index(b, d, gr.m - 1));
  return {b.reshape(clamped, {gr.count * cap}), valid, cap};
}

// rows of x [M, W] -> [R, W].
Value gather_rows(Builder& b, const Value& x, const Value& rows) {
  int64_t w = x.type.dims[1];
  return b.emit1("gather", {x, rows},
                 "dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                 "start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, " +
                     std::to_string(w) + ">, indices_are_sorted = false",
                 TensorType(x.type.dtype, {rows.type.dims[0], w}));
}

// dot_general with one batch dim (or none), accumulating in `acc`: half-type
// operands multiply exactly into f32 (no converted copy of the weights),
// f32/f64 follow the matmul precision.
Value dot(Builder& b, const OpCall& c, const Value& l, const Value& r, bool batched, int64_t lc, int64_t rc,
          const Dims& dims, DType acc) {
  std::string attr = "dot_dimension_numbers = #stablehlo.dot<";
  if (batched) attr += "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], ";
  attr += "lhs_contracting_dimensions = [" + std::to_string(lc) + "], rhs_contracting_dimensions = [" +
          std::to_string(rc) + "]>";
  if (l.type.dtype == acc) attr += precision_config(c.matmul_precision, acc);
  return b.emit1("dot_general", {l, r}, attr, TensorType(acc, dims));
}

// x [A, B, ...] where keep [A, B], else zero.
Value zeros_unless(Builder& b, const Value& keep, const Value& x) {
  Dims d;
  for (int64_t i = 0; i < keep.type.rank(); ++i) d.push_back(i);
  return b.select(b.broadcast_in_dim(keep, x.type.dims, d), x, b.splat_float(x.type, 0));
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

// The first group after g with rows beyond the capacity, or G.
Value next_overflow(Builder& b, const Value& over, const Value& g) {
  int64_t n = over.type.numel();
  Value iota = b.iota(TensorType(DType::I64, {n}), 0);
  Value later = b.binary("and", over, b.compare(iota, b.broadcast_in_dim(g, {n}, {}), "GT"));
  Value cand = b.select(later, iota, splat_index(b, {n}, n));
  return b.reduce({cand}, {index(b, n)}, {0}, [](Builder& r, const Values& a) {
    return Values{r.minimum(a[0], a[1])};
  })[0];
}

// Rows [s, s + T) (s = min(row, M - T): the window stays inside lhs) and
// which of them lie in [row, hi).
struct Tile {
  Value start, mask;
};
Tile tile_at(Builder& r, const Value& row, const Value& hi, int64_t m, int64_t t) {
  Value s = r.minimum(row, index(r, m - t));
  Value rows = r.add(r.iota(TensorType(DType::I64, {t}), 0), r.broadcast_in_dim(s, {t}, {}));
  Value in = r.binary("and", r.compare(rows, r.broadcast_in_dim(row, {t}, {}), "GE"),
                      r.compare(rows, r.broadcast_in_dim(hi, {t}, {}), "LT"));
  return {s, in};
}

// For every group with more than C rows (and only those): block = init(g,
// state); for each tile of its rows past the first C, (block, state) =
// step(tile, block, state); then state = finish(g, block, state).
using BlockInit = std::function<Value(Builder&, const Value& g, const Value& state, const Values& inv)>;
using TileStep = std::function<std::pair<Value, Value>(Builder&, const Tile&, const Value& block, const Value& state,
                                                       const Values& inv)>;
using BlockFinish = std::function<Value(Builder&, const Value& g, const Value& block, const Value& state)>;
Value overflow_loop(Builder& b, const Groups& gr, int64_t cap, int64_t t, const Value& state, const Values& invariants,
                    const BlockInit& init, const TileStep& step, const BlockFinish& finish) {
  Value over = b.compare(b.subtract(gr.hi, gr.lo), splat_index(b, {gr.count}, cap), "GT");
  Values carry{next_overflow(b, over, index(b, -1)), index(b, gr.count), state, gr.lo, gr.hi, over};
  size_t ni = invariants.size();
  carry.insert(carry.end(), invariants.begin(), invariants.end());
  return loop_while_less(b, carry, [&](Builder& r, const Values& a) {
    const Value& g = a[0];
    Values inv(a.end() - ni, a.end());
    Value first = r.add(scalar_at(r, a[3], g), index(r, cap)), end = scalar_at(r, a[4], g);
    Values tiles{first, end, init(r, g, a[2], inv), a[2]};
    tiles.insert(tiles.end(), inv.begin(), inv.end());
    Values done = loop_while_less(r, tiles, [&](Builder& q, const Values& p) {
      Values pinv(p.end() - ni, p.end());
      auto [block, st] = step(q, tile_at(q, p[0], p[1], gr.m, t), p[2], p[3], pinv);
      Values next{q.add(p[0], index(q, t)), p[1], block, st};
      next.insert(next.end(), pinv.begin(), pinv.end());
      return next;
    });
    Values out{next_overflow(r, a[5], g), a[1], finish(r, g, done[2], done[3]), a[3], a[4], a[5]};
    out.insert(out.end(), inv.begin(), inv.end());
    return out;
  })[2];
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
  Groups gr = group_rows(b, sizes, m);
  Windows win = windows(b, gr, capacity(m, groups));
  int64_t cap = win.cap;

  // Capacity part: [G, C, K] x rhs -> [G, C, N], then each row picks its own.
  Value xw = b.reshape(gather_rows(b, x, win.rows), {groups, cap, k});
  Value y = dot(b, c, xw, w, true, 2, tr ? 2 : 1, {groups, cap, n}, acc);
  Dims mg{m, groups};
  Value row = b.iota(TensorType(DType::I64, mg), 0);
  Value group = sum_i64(b, b.convert(b.compare(b.broadcast_in_dim(gr.hi, mg, {1}), row, "LE"), DType::I64), 1);
  Value g_safe = b.minimum(group, splat_index(b, {m}, groups - 1));
  Value offset = b.subtract(b.iota(TensorType(DType::I64, {m}), 0), b.gather_elements_1d(gr.lo, g_safe));
  Value pick = b.binary("and", b.compare(group, splat_index(b, {m}, groups), "LT"),
                        b.compare(offset, splat_index(b, {m}, cap), "LT"));
  Value flat = b.add(b.multiply(g_safe, splat_index(b, {m}, cap)), b.minimum(offset, splat_index(b, {m}, cap - 1)));
  Value result = zeros_unless(b, pick, gather_rows(b, b.reshape(y, {groups * cap, n}), flat));
  result = b.convert(result, out.dtype);

  // Overflow: tiles of T rows times the group's weight block (transposed
  // once per group: XLA's CPU dot is slow with K last on both sides).
  int64_t t = tile_rows(m, groups);
  Value full = overflow_loop(
      b, gr, cap, t, result, {x, w},
      [&](Builder& r, const Value& g, const Value&, const Values& inv) {
        Dims block = tr ? Dims{1, n, k} : Dims{1, k, n};
        Value wg = r.reshape(r.dynamic_slice(inv[1], {g, index(r, 0), index(r, 0)}, block), {block[1], block[2]});
        return tr ? r.transpose(wg, {1, 0}) : wg;
      },
      [&](Builder& q, const Tile& tile, const Value& wg, const Value& o, const Values& inv) {
        Value xt = q.dynamic_slice(inv[0], {tile.start, index(q, 0)}, {t, k});
        Value yt = q.convert(dot(q, c, xt, wg, false, 1, 0, {t, n}, acc), out.dtype);
        Value cur = q.dynamic_slice(o, {tile.start, index(q, 0)}, {t, n});
        Value keep = q.broadcast_in_dim(tile.mask, {t, n}, {0});
        return std::make_pair(wg, q.dynamic_update_slice(o, q.select(keep, yt, cur), {tile.start, index(q, 0)}));
      },
      [](Builder&, const Value&, const Value&, const Value& o) { return o; });
  return {full};
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
  check_int(c, sizes.type);
  int64_t m = x.type.dims[0], k = x.type.dims[1], n = dy.type.dims[1], groups = sizes.type.dims[0];
  if (out.numel() == 0) return {b.splat_float(out, 0)};
  check_sizes(b, sizes, c.op);
  if (m == 0) return {b.splat_float(out, 0)};
  DType acc = compute_type(out.dtype);
  Groups gr = group_rows(b, sizes, m);
  Windows win = windows(b, gr, capacity(m, groups));
  int64_t cap = win.cap;
  Dims block = tr ? Dims{n, k} : Dims{k, n};

  // Capacity part: the windows' rows (others zero) contracted in one batched dot.
  Value xw = zeros_unless(b, win.valid, b.reshape(gather_rows(b, x, win.rows), {groups, cap, k}));
  Value dyw = zeros_unless(b, win.valid, b.reshape(gather_rows(b, dy, win.rows), {groups, cap, n}));
  Dims full{groups, block[0], block[1]};
  Value dw = tr ? dot(b, c, dyw, xw, true, 1, 1, full, acc) : dot(b, c, xw, dyw, true, 1, 1, full, acc);

  // Overflow: each such group's block accumulates its further tiles.
  int64_t t = tile_rows(m, groups);
  dw = overflow_loop(
      b, gr, cap, t, dw, {x, dy},
      [&](Builder& r, const Value& g, const Value& state, const Values&) {
        return r.reshape(r.dynamic_slice(state, {g, index(r, 0), index(r, 0)}, {1, block[0], block[1]}), block);
      },
      [&](Builder& q, const Tile& tile, const Value& blk, const Value& state, const Values& inv) {
        auto rows = [&](const Value& src, int64_t width) {
          Value s = q.dynamic_slice(src, {tile.start, index(q, 0)}, {t, width});
          return q.select(q.broadcast_in_dim(tile.mask, {t, width}, {0}), s, q.splat_float(s.type, 0));
        };
        Value xt = rows(inv[0], k), dyt = rows(inv[1], n);
        Value prod = tr ? dot(q, c, dyt, xt, false, 0, 0, block, acc) : dot(q, c, xt, dyt, false, 0, 0, block, acc);
        return std::make_pair(q.add(blk, prod), state);
      },
      [&](Builder& r, const Value& g, const Value& blk, const Value& state) {
        return r.dynamic_update_slice(state, r.reshape(blk, {1, block[0], block[1]}), {g, index(r, 0), index(r, 0)});
      });
  return {b.convert(dw, out.dtype)};
}

TORCH_TPU_LOWERING("tpu::ragged_dot", ragged_dot_rule);
TORCH_TPU_LOWERING("tpu::ragged_dot_weight_grad", ragged_dot_weight_grad_rule);

}  // namespace
}  // namespace torch_tpu::ops
