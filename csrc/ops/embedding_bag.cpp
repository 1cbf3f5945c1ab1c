// embedding_bag (_embedding_bag, _embedding_bag_forward_only) and its
// backward ops, as the CPU's EmbeddingBag.cpp computes them, auxiliary
// outputs included:
// * offset2bag[i] = (number of the first num_bags offsets <= i) - 1; empty
//   when the CPU's "fast path" sum skips it (float/half/bfloat16 weight with
//   unit column stride, no padding_idx; the meta override sizes it).
// * bag_size[k] = offsets[k+1] - offsets[k] (the last bag: N - offsets[B-1],
//   even with include_last_offset), minus the padding indices in the bag;
//   zeros in sum mode (the CPU zeroes it "to be deterministic").
// * max_indices: the argmax row per (bag, column) in max mode (the first
//   element of the bag unless a later one is strictly greater; a NaN first
//   element stays), else a copy of bag_size.
// The fast path sums bag k over [offsets[k], offsets[k+1]) (the last bag up to
// offsets[-1] with include_last_offset), the slow path over offset2bag.
// Half types accumulate in float32. The CPU's value checks (offsets[0] == 0,
// offsets[-1] <= N, indices in [0, num_weights)) are runtime checks.
#include <limits>

#include "ops/elementwise_common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

constexpr int64_t kSum = 0, kMean = 1, kMax = 2;

Value zeros(Builder& b, const TensorType& t) { return b.convert(b.splat_int(t.with_dtype(DType::I64), 0), t.dtype); }

// [N, D] flat positions row * D + d (rows [N] i64).
Value flat_positions(Builder& b, const Value& rows, int64_t d) {
  TensorType t(DType::I64, {rows.type.dims[0], d});
  return b.add(b.multiply(b.broadcast_in_dim(rows, t.dims, {0}), b.splat_int(t, d)), b.iota(t, 1));
}

// table[rows[i], :] -> [N, D]; rows clamped into range (callers check them).
Value gather_rows(Builder& b, const Value& table, const Value& rows) {
  int64_t r = table.type.dims[0], d = table.type.dims[1], n = rows.type.dims[0];
  TensorType out(table.type.dtype, {n, d});
  if (r * d == 0 || n == 0) return zeros(b, out);
  Value cl = b.minimum(b.maximum(rows, b.splat_int(rows.type, 0)), b.splat_int(rows.type, r - 1));
  return b.gather_elements_1d(b.reshape(table, {r * d}), flat_positions(b, cl, d));
}

// operand[rows[i], d] (combine)= updates[i, d] where `mask` [N, D] holds (and
// the row is in range); the rest is dropped.
Value scatter_rows(Builder& b, const Value& operand, const Value& rows, const Value& updates, const Value* mask,
                   const std::string& combine) {
  int64_t r = operand.type.dims[0], d = operand.type.dims[1], n = rows.type.dims[0];
  if (r * d == 0 || n == 0) return operand;
  TensorType it(DType::I64, {n, d});
  Value pos = flat_positions(b, rows, d);
  Value rb = b.broadcast_in_dim(rows, it.dims, {0});
  Value ok = logical_and(b, b.compare(rb, b.splat_int(it, 0), "GE"), b.compare(rb, b.splat_int(it, r), "LT"));
  if (mask) ok = logical_and(b, ok, *mask);
  pos = b.select(ok, pos, b.splat_int(it, r * d));  // out of range: dropped
  Value flat = b.scatter_elements_1d(b.reshape(operand, {r * d}), pos, updates, combine);
  return b.reshape(flat, {r, d});
}

// out[pos[i, d]] = round(out + upd[i, d]) for i = 0, 1, ... in turn: the
// CPU's half-precision axpy / index_add_, which round after every step (a
// row of `pos` holds distinct positions; out-of-range ones are dropped).
Value sequential_add(Builder& b, const Value& init, const Value& pos, const Value& upd) {
  int64_t k = pos.type.dims[0], d = pos.type.dims[1], r = init.type.dims[0];
  if (k == 0 || d == 0 || r == 0) return init;
  TensorType scalar_i(DType::I64, {});
  std::vector<TensorType> carry{scalar_i, init.type, pos.type, upd.type};
  Values loop = b.emit(
      "while", {b.constant_int(DType::I64, 0), init, pos, upd}, "", carry,
      {{carry, [k](Builder& rb, const Values& q) { return Values{rb.compare(q[0], rb.constant_int(DType::I64, k), "LT")}; }},
       {carry, [d, r](Builder& rb, const Values& q) {
          Value z = rb.constant_int(DType::I64, 0);
          Value p = rb.reshape(rb.dynamic_slice(q[2], {q[0], z}, {1, d}), {d});
          Value u = rb.reshape(rb.dynamic_slice(q[3], {q[0], z}, {1, d}), {d});
          DType dt = u.type.dtype;
          Value pc = rb.minimum(rb.maximum(p, rb.splat_int(p.type, 0)), rb.splat_int(p.type, r - 1));
          Value cur = rb.gather_elements_1d(q[1], pc);
          Value sum = rb.convert(rb.add(rb.convert(cur, DType::F32), rb.convert(u, DType::F32)), dt);
          Value next = rb.scatter_elements_1d(q[1], p, sum);
          return Values{rb.add(q[0], rb.constant_int(DType::I64, 1)), next, q[2], q[3]};
        }}});
  return loop[1];
}

bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

// Inclusive prefix sum of a 1-D i64 value.
Value cumsum(Builder& b, const Value& x) {
  int64_t n = x.type.dims[0];
  Value s = x;
  for (int64_t shift = 1; shift < n; shift *= 2) {
    Value padded = b.pad(s, b.constant_int(DType::I64, 0), {shift}, {0}, {0});
    s = b.add(s, b.slice(padded, {0}, {n}, {1}));
  }
  return s;
}

// offset2bag as make_offset2bag: (number of offsets[0..count) <= i) - 1.
Value offset2bag_of(Builder& b, const Value& off, int64_t count, int64_t n) {
  TensorType t(DType::I64, {n});
  if (count == 0 || n == 0) return b.splat_int(t, -1);
  Value o = b.slice(off, {0}, {count}, {1});
  TensorType pair(DType::I64, {n, count});
  Value le = b.convert(b.compare(b.broadcast_in_dim(o, pair.dims, {1}), b.iota(pair, 0), "LE"), DType::I64);
  Value cnt = b.reduce({le}, {b.constant_int(DType::I64, 0)}, {1},
                       [](Builder& r, const Values& q) { return Values{r.add(q[0], q[1])}; })[0];
  return b.subtract(cnt, b.splat_int(t, 1));
}

Value gather1(Builder& b, const Value& table, const Value& at) {
  int64_t n = table.type.dims[0];
  if (n == 0) return zeros(b, TensorType(table.type.dtype, at.type.dims));
  Value cl = b.minimum(b.maximum(at, b.splat_int(at.type, 0)), b.splat_int(at.type, n - 1));
  return b.gather_elements_1d(table, cl);
}

Value in_range(Builder& b, const Value& x, int64_t lo, int64_t hi) {
  return logical_and(b, b.compare(x, b.splat_int(x.type, lo), "GE"), b.compare(x, b.splat_int(x.type, hi), "LT"));
}

// _embedding_bag / _embedding_bag_forward_only(weight, indices, offsets,
// scale_grad_by_freq, mode, sparse, per_sample_weights?, include_last_offset, padding_idx)
Values embedding_bag_forward(Builder& b, const OpCall& c, const Values& v) {
  const Value& weight = operand(c, v, 0);
  const Value& indices_in = operand(c, v, 1);
  const Value& offsets_in = operand(c, v, 2);
  if (indices_in.type.rank() != 1 || weight.type.rank() != 2)
    throw NotLowered(c.op + ": only 1-D indices and a 2-D weight are lowered");
  if (offsets_in.type.rank() != 1)
    throw std::invalid_argument("offsets has to be a 1D Tensor, but got Tensor of dimension " +
                                std::to_string(offsets_in.type.rank()));
  const auto& outs = c.outputs;
  int64_t mode = c.arg(4).i;
  bool ilo = c.arg(7).b;
  int64_t pad = c.arg(8).i;
  int64_t n = indices_in.type.dims[0], m = offsets_in.type.dims[0];
  int64_t vocab = weight.type.dims[0], d = weight.type.dims[1];
  int64_t bags = outs[0].dims[0];
  DType dt = weight.type.dtype, ct = compute_type(dt);
  const Value* psw = optional_operand(c, v, 6);
  Value idx = b.convert(indices_in, DType::I64), off = b.convert(offsets_in, DType::I64);
  TensorType nt(DType::I64, {n});

  // check_arguments' value checks
  if (m > 0) {
    Value first = b.reshape(b.slice(off, {0}, {1}, {1}), {});
    Value last = b.reshape(b.slice(off, {m - 1}, {m}, {1}), {});
    runtime_check(b, b.compare(first, b.constant_int(DType::I64, 0), "NE"),
                  "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0.");
    runtime_check(b, b.compare(last, b.constant_int(DType::I64, n), "GT"),
                  "offsets[-1] can not be greater than input's length " + std::to_string(n));
  }
  bool floatish = dt == DType::F32 || dt == DType::F16 || dt == DType::BF16;
  bool fast;
  if (mode == kSum) {
    fast = n > 0 ? outs[1].numel() == 0 : floatish && pad < 0;
  } else {
    size_t k = static_cast<size_t>(c.arg(0).operand());
    bool strided = k < c.operand_contiguous.size() && c.operand_contiguous[k] == 0;
    fast = floatish && pad < 0 && !strided;
  }

  Value o2b = offset2bag_of(b, off, bags, n);
  Value iota_n = b.iota(nt, 0);
  // members: the indices a bag sums over
  Value member = b.broadcast_to(b.constant_bool(true), {n});
  if (mode != kMax && fast && bags > 0) {
    Value end = b.splat_int(nt, n);
    if (ilo) end = b.broadcast_to(b.reshape(b.slice(off, {bags}, {bags + 1}, {1}), {}), {n});
    member = logical_and(b, b.compare(iota_n, end, "LT"), b.compare(o2b, b.splat_int(nt, 0), "GE"));
  }
  Value bad = logical_and(b, member, logical_not(b, in_range(b, idx, 0, vocab)));
  if (fast && mode != kMax)
    runtime_check(b, bad, "embedding_bag: an index of input is not in the valid range [0, " + std::to_string(vocab) + ")");
  else
    runtime_check(b, bad,
                  "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found an index out of range [0, " +
                      std::to_string(vocab) + ")");
  Value is_pad = b.broadcast_to(b.constant_bool(false), {n});
  if (pad >= 0) is_pad = b.compare(idx, b.splat_int(nt, pad), "EQ");
  Value valid = logical_and(b, member, logical_not(b, is_pad));

  // bag sizes (after the padding decrement)
  TensorType bt(DType::I64, {bags});
  Value bag_size = b.splat_int(bt, 0);
  if (bags > 0) {
    Value starts = b.slice(off, {0}, {bags}, {1});
    Value next = b.concatenate({b.slice(off, {1}, {bags}, {1}), b.reshape(b.constant_int(DType::I64, n), {1})}, 0);
    bag_size = b.subtract(next, starts);
    if (pad >= 0 && n > 0) {
      Value to = b.select(is_pad, o2b, b.splat_int(nt, bags));
      bag_size = b.scatter_elements_1d(bag_size, to, b.splat_int(nt, -1), "add");
    }
  }
  const TensorType& o2b_t = outs[1];
  Value o2b_out = o2b_t.numel() == n && n > 0 ? b.convert(o2b, o2b_t.dtype) : zeros(b, o2b_t);
  o2b_out = b.reshape(o2b_out, o2b_t.dims);
  auto to_out = [&](const Value& x, const TensorType& t) { return b.reshape(b.convert(x, t.dtype), t.dims); };

  TensorType acc_t(ct, {bags, d});
  if (mode != kMax) {
    Value rows = b.convert(gather_rows(b, weight, idx), ct);  // [N, D]
    if (psw) rows = b.multiply(rows, b.broadcast_in_dim(b.convert(*psw, ct), rows.type.dims, {0}));
    Value target = b.select(valid, o2b, b.splat_int(nt, bags));
    Value acc = scatter_rows(b, zeros(b, acc_t), target, rows, nullptr, "add");
    Value out = b.convert(acc, dt);
    if (mode == kMean) {
      Value div = b.convert(b.maximum(bag_size, b.splat_int(bt, 1)), ct);
      out = b.convert(b.divide(b.convert(out, ct), b.broadcast_in_dim(div, acc_t.dims, {0})), dt);
    }
    Value bs_out = mode == kSum ? zeros(b, outs[2]) : to_out(bag_size, outs[2]);
    Value mi_out = mode == kSum ? zeros(b, outs[3]) : to_out(bag_size, outs[3]);
    return Values{b.reshape(out, outs[0].dims), o2b_out, bs_out, mi_out};
  }

  // max: the first element of the bag, replaced by strictly greater ones
  TensorType bd(DType::I64, {bags, d});
  if (n == 0 || bags == 0 || d == 0)
    return Values{zeros(b, outs[0]), o2b_out, to_out(bag_size, outs[2]), zeros(b, outs[3])};
  Value vals = gather_rows(b, weight, idx);  // [N, D] in the weight's dtype
  TensorType nd(DType::I64, {n, d});
  Value rows_i = b.select(valid, o2b, b.splat_int(nt, bags));
  Value first = b.scatter_elements_1d(b.splat_int(bt, n), rows_i, iota_n, "minimum");
  Value is_first = logical_and(b, valid, b.compare(gather1(b, first, o2b), iota_n, "EQ"));
  Value nan = is_nan(b, vals);
  Value valid_nd = b.broadcast_in_dim(valid, nd.dims, {0});
  Value cand = logical_and(b, valid_nd, logical_not(b, nan));
  Value mx = scatter_rows(b, b.broadcast_to(b.lowest(dt), bd.dims), rows_i, vals, &cand, "maximum");
  Value hit = logical_and(b, cand, b.compare(vals, gather_rows(b, mx, o2b), "EQ"));
  Value iota_nd = b.iota(nd, 0);
  Value win = scatter_rows(b, b.splat_int(bd, n), rows_i, iota_nd, &hit, "minimum");
  Value first_nan = logical_and(b, b.broadcast_in_dim(is_first, nd.dims, {0}), nan);
  Value win_nan = scatter_rows(b, b.splat_int(bd, n), rows_i, iota_nd, &first_nan, "minimum");
  win = b.select(b.compare(win_nan, b.splat_int(bd, n), "LT"), win_nan, win);
  Value found = b.compare(win, b.splat_int(bd, n), "LT");
  Value wc = b.minimum(win, b.splat_int(bd, n - 1));
  Value col = b.iota(bd, 1);
  Value flat = b.add(b.multiply(wc, b.splat_int(bd, d)), col);
  Value out = b.gather_elements_1d(b.reshape(vals, {n * d}), flat);
  out = b.select(found, out, zeros(b, out.type));
  Value mi = b.select(found, b.gather_elements_1d(idx, wc), b.splat_int(bd, 0));
  return Values{b.reshape(out, outs[0].dims), o2b_out, to_out(bag_size, outs[2]), to_out(mi, outs[3])};
}

TORCH_TPU_LOWERING("_embedding_bag", embedding_bag_forward);
TORCH_TPU_LOWERING("_embedding_bag_forward_only", embedding_bag_forward);

void require_index_dtype(const TensorType& x, const char* name, int pos) {
  if (x.dtype != DType::I64 && x.dtype != DType::I32)
    throw std::invalid_argument(std::string("Expected tensor for argument #") + std::to_string(pos) + " '" + name +
                                "' to have one of the following scalar types: Long, Int; but got " +
                                torch_dtype_name(x.dtype) + " instead (while checking arguments for embedding_bag)");
}

// offset2bag as the backward ops take it: recomputed from all the offsets
// when it came back empty (the forward's fast path).
Value backward_offset2bag(Builder& b, const Value& o2b_in, const Value& off, int64_t n) {
  if (o2b_in.type.numel() == 0 && n != 0) return offset2bag_of(b, b.convert(off, DType::I64), off.type.dims[0], n);
  if (o2b_in.type.numel() != n) throw NotLowered("embedding_bag backward: offset2bag of an unexpected size");
  return b.reshape(b.convert(o2b_in, DType::I64), {n});
}

// The dense weight gradient [num_weights, D].
Value dense_backward(Builder& b, const OpCall& c, const Value& grad_in, const Value& idx_in, const Value& o2b,
                     const Value& bag_size_in, const Value& max_idx_in, bool scale_by_freq, int64_t mode,
                     const Value* psw, int64_t pad) {
  const TensorType& out = c.outputs[0];
  DType dt = out.dtype, ct = compute_type(dt);
  if (!hlo::is_float(grad_in.type.dtype) || grad_in.type.rank() != 2)
    throw NotLowered(c.op + ": grad must be a 2-D floating tensor");
  int64_t vocab = out.dims[0], d = out.dims[1], n = idx_in.type.numel(), bags = grad_in.type.dims[0];
  Value grad = b.convert(grad_in, ct);
  TensorType acc_t(ct, {vocab, d});
  if (mode == kMax) {
    if (max_idx_in.type.rank() != 2 || max_idx_in.type.dims[0] != bags || max_idx_in.type.dims[1] != d)
      throw NotLowered(c.op + ": max_indices of an unexpected shape");
    if (bag_size_in.type.numel() != bags) throw NotLowered(c.op + ": bag_size of an unexpected shape");
    TensorType bd(DType::I64, {bags, d});
    Value nonempty = b.compare(b.reshape(b.convert(bag_size_in, DType::I64), {bags}), b.splat_int(TensorType(DType::I64, {bags}), 0), "NE");
    Value mi = b.convert(max_idx_in, DType::I64);
    if (bags * d == 0 || vocab * d == 0) return zeros(b, out);
    Value pos = b.add(b.multiply(mi, b.splat_int(bd, d)), b.iota(bd, 1));
    Value ok = logical_and(b, b.broadcast_in_dim(nonempty, bd.dims, {0}), in_range(b, mi, 0, vocab));
    pos = b.select(ok, pos, b.splat_int(bd, vocab * d));
    if (is_half(dt))
      return b.reshape(sequential_add(b, zeros(b, TensorType(dt, {vocab * d})), pos, b.convert(grad_in, dt)), out.dims);
    Value gw = b.scatter_elements_1d(b.reshape(zeros(b, acc_t), {vocab * d}), pos, grad, "add");
    return b.convert(b.reshape(gw, {vocab, d}), dt);
  }
  if (n == 0 || vocab * d == 0) return zeros(b, out);
  TensorType nt(DType::I64, {n});
  TensorType sc(ct, {n});
  Value idx = b.reshape(b.convert(idx_in, DType::I64), {n});
  Value scale = b.splat_float(sc, 1.0);
  if (psw) scale = b.convert(b.reshape(*psw, {n}), ct);
  if (scale_by_freq) {
    // counts[sorted[r]] for the r-th distinct index (the CPU's loop reads the
    // count at position r of the sorted indices)
    TensorType vt(DType::I64, {vocab});
    Value inside = in_range(b, idx, 0, vocab);
    Value to = b.select(inside, idx, b.splat_int(nt, vocab));
    Value counts = b.scatter_elements_1d(b.splat_int(vt, 0), to, b.splat_int(nt, 1), "add");
    Value present = b.convert(b.compare(counts, b.splat_int(vt, 0), "GT"), DType::I64);
    Value rank = b.subtract(cumsum(b, present), present);
    TensorType elem(DType::I64, {});
    Value sorted = b.emit("sort", {idx}, "dimension = 0 : i64, is_stable = true", {idx.type},
                          {{{elem, elem}, [](Builder& r, const Values& q) { return Values{r.compare(q[0], q[1], "LT")}; }}})[0];
    Value r = gather1(b, rank, idx);
    Value freq = gather1(b, counts, gather1(b, sorted, r));
    scale = b.divide(scale, b.convert(freq, ct));
  }
  if (mode == kMean) {
    Value bs = gather1(b, b.reshape(b.convert(bag_size_in, DType::I64), {bag_size_in.type.numel()}), o2b);
    Value nz = b.compare(bs, b.splat_int(nt, 0), "NE");
    scale = b.select(nz, b.divide(scale, b.convert(bs, ct)), scale);
  }
  scale = b.convert(b.convert(scale, dt), ct);  // the CPU casts the scale to the gradient's dtype
  Value rows = b.multiply(gather_rows(b, grad, o2b), b.broadcast_in_dim(scale, {n, d}, {0}));
  Value target = idx;
  if (pad >= 0) target = b.select(b.compare(idx, b.splat_int(nt, pad), "EQ"), b.splat_int(nt, vocab), idx);
  if (is_half(dt)) {
    Value pos = flat_positions(b, target, d);
    TensorType it(DType::I64, {n, d});
    Value tb = b.broadcast_in_dim(target, it.dims, {0});
    Value ok = logical_and(b, b.compare(tb, b.splat_int(it, 0), "GE"), b.compare(tb, b.splat_int(it, vocab), "LT"));
    pos = b.select(ok, pos, b.splat_int(it, vocab * d));
    // the CPU adds in the order of its (unstable) sort of the indices
    TensorType elem(DType::I64, {});
    Value perm = b.emit("sort", {idx, b.iota(nt, 0)}, "dimension = 0 : i64, is_stable = false", {nt, nt},
                        {{{elem, elem, elem, elem},
                          [](Builder& r, const Values& q) { return Values{r.compare(q[0], q[1], "LT")}; }}})[1];
    return b.reshape(sequential_add(b, zeros(b, TensorType(dt, {vocab * d})), gather_rows(b, pos, perm),
                                    gather_rows(b, b.convert(rows, dt), perm)),
                     out.dims);
  }
  Value gw = scatter_rows(b, zeros(b, acc_t), target, rows, nullptr, "add");
  return b.convert(gw, dt);
}

bool non_contiguous(const OpCall& c, size_t arg) {
  size_t k = static_cast<size_t>(c.arg(arg).operand());
  return k < c.operand_contiguous.size() && c.operand_contiguous[k] == 0;
}

void require_contiguous(const OpCall& c, size_t arg, const char* name) {
  if (non_contiguous(c, arg))
    throw std::invalid_argument(std::string("Expected contiguous tensor, but got non-contiguous tensor for argument #1 '") +
                                name + "' (while checking arguments for embedding_bag)");
}

// _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size,
// maximum_indices, num_weights, scale_grad_by_freq, mode, sparse, per_sample_weights?, padding_idx)
TORCH_TPU_LOWERING("_embedding_bag_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& idx = operand(c, v, 1);
  const Value& off = operand(c, v, 2);
  const Value& o2b_in = operand(c, v, 3);
  // the CPU's checks, in its order: indices and offsets promoted together
  DType common = promote_types(idx.type.dtype, off.type.dtype);
  require_index_dtype(TensorType(common, {}), "indices", 1);
  require_contiguous(c, 1, "indices");
  require_contiguous(c, 2, "offsets");
  if (idx.type.numel() != 0 && o2b_in.type.numel() == 0) {
    if (idx.type.rank() == 0) throw std::out_of_range("Dimension specified as 0 but tensor has no dimensions");
  } else {
    require_index_dtype(o2b_in.type, "offset2bag", 1);
    require_contiguous(c, 3, "offset2bag");
  }
  if (c.arg(9).b) throw NotLowered(c.op + ": sparse gradients are not lowered");
  if (idx.type.rank() != 1) throw NotLowered(c.op + ": only 1-D indices are lowered");
  Value o2b = backward_offset2bag(b, o2b_in, off, idx.type.dims[0]);
  return Values{dense_backward(b, c, operand(c, v, 0), idx, o2b, operand(c, v, 4), operand(c, v, 5), c.arg(7).b,
                               c.arg(8).i, optional_operand(c, v, 10), c.arg(11).i)};
});

// _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size,
// maximum_indices, num_weights, scale_grad_by_freq, mode, per_sample_weights?, padding_idx)
TORCH_TPU_LOWERING("_embedding_bag_dense_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& idx = operand(c, v, 1);
  const Value& o2b = operand(c, v, 2);
  if (idx.type.rank() != 1 || !hlo::is_integral(idx.type.dtype) || !hlo::is_integral(o2b.type.dtype))
    throw NotLowered(c.op + ": only 1-D integer indices are lowered");
  int64_t mode = c.arg(7).i;
  int64_t n = idx.type.dims[0];
  if (mode != kMax && o2b.type.numel() != n) throw NotLowered(c.op + ": offset2bag of an unexpected size");
  Value o2 = mode == kMax ? b.splat_int(TensorType(DType::I64, {n}), 0) : b.reshape(b.convert(o2b, DType::I64), {n});
  return Values{dense_backward(b, c, operand(c, v, 0), idx, o2, operand(c, v, 3), operand(c, v, 4), c.arg(6).b, mode,
                               optional_operand(c, v, 8), c.arg(9).i)};
});

// _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode, padding_idx)
TORCH_TPU_LOWERING("_embedding_bag_per_sample_weights_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& grad_in = operand(c, v, 0);
  const Value& weight = operand(c, v, 1);
  const Value& idx_in = operand(c, v, 2);
  const Value& off = operand(c, v, 3);
  require_index_dtype(TensorType(promote_types(idx_in.type.dtype, off.type.dtype), {}), "indices", 1);
  require_contiguous(c, 2, "indices");
  if (idx_in.type.numel() == 0 || operand(c, v, 4).type.numel() != 0) {
    require_index_dtype(operand(c, v, 4).type, "offset2bag", 1);
    require_contiguous(c, 4, "offset2bag");
  }
  const TensorType& out = c.outputs[0];
  DType ct = compute_type(out.dtype);
  int64_t n = idx_in.type.dims[0], d = grad_in.type.dims[1], pad = c.arg(6).i;
  if (n == 0) return Values{zeros(b, out)};
  if (!hlo::is_integral(off.type.dtype)) throw NotLowered(c.op + ": integer offsets expected");
  Value o2b = backward_offset2bag(b, operand(c, v, 4), off, n);
  Value idx = b.convert(idx_in, DType::I64);
  Value g = gather_rows(b, b.convert(grad_in, ct), o2b);
  Value w = gather_rows(b, b.convert(weight, ct), idx);
  Value dot = d == 0 ? zeros(b, TensorType(ct, {n}))
                     : b.reduce({b.multiply(g, w)}, {b.constant_float(ct, 0)}, {1},
                                [](Builder& r, const Values& q) { return Values{r.add(q[0], q[1])}; })[0];
  if (pad >= 0) {
    TensorType nt(DType::I64, {n});
    dot = b.select(b.compare(idx, b.splat_int(nt, pad), "EQ"), zeros(b, dot.type), dot);
  }
  return Values{b.reshape(b.convert(dot, out.dtype), out.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
