// segment_reduce (sum, mean, prod, max, min over consecutive segments of
// `axis`, given by lengths or offsets) and its backward, as the CPU's
// SegmentReduce.cpp computes them. Data is viewed as [O, J, I] (dims before
// axis, axis, dims after) and the segment bounds as [O, S]; segment s of row o
// covers j in [start, end). The CPU folds each segment in order in the data's
// own dtype (a half type rounds after every step), so the forward is a while
// loop over j doing the same; the backward follows its per-element rules.
#include <cmath>
#include <limits>

#include "ops/elementwise_common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

enum class Reduce { Sum, Mean, Prod, Max, Min };

Reduce reduction_of(const std::string& name) {
  if (name == "sum") return Reduce::Sum;
  if (name == "mean") return Reduce::Mean;
  if (name == "prod") return Reduce::Prod;
  if (name == "max" || name == "amax") return Reduce::Max;  // the CPU's get_reduction_enum takes both
  if (name == "min" || name == "amin") return Reduce::Min;
  throw std::invalid_argument("reduce argument must be either sum, prod, max, min or mean, got " + name);
}

struct Segments {
  int64_t O, J, I, S;
  Value start, end;  // [O, S] i64
  Value mask;        // [O, S, J] pred: j in segment s
};

// Bounds from lengths ([..., S]: cumulative ends) or offsets ([..., S + 1]).
// The forward checks `axis` against them; the backward, like the CPU's,
// reduces over their last dim whatever axis says (`axis` < 0). The index
// dtype check is the CPU kernel's (`kernel`), made first.
Segments segments(Builder& b, const OpCall& c, const TensorType& data, const Value* lengths, const Value* offsets,
                  int64_t axis, const char* kernel) {
  const Value& bounds = lengths ? *lengths : *offsets;
  const char* what = lengths ? "lengths" : "offsets";
  if (axis >= 0) {  // forward
    if (data.rank() < bounds.type.rank())
      throw std::invalid_argument(c.op + ": data has fewer dims than " + what);
    if (axis != bounds.type.rank() - 1)
      throw std::invalid_argument(std::string("segment_reduce(): Expected axis to be the last dimension of ") + what +
                                  " but got " + std::to_string(axis) + ".");
  } else if (bounds.type.rank() == 0) {
    throw std::out_of_range("Dimension specified as -1 but tensor has no dimensions");
  }
  if (bounds.type.dtype != DType::I64 && bounds.type.dtype != DType::I32) not_implemented_for(kernel, bounds.type.dtype);
  axis = bounds.type.rank() - 1;
  if (data.rank() <= axis)
    throw std::out_of_range("Dimension out of range (expected to be in range of [" + std::to_string(-std::max<int64_t>(data.rank(), 1)) +
                            ", " + std::to_string(std::max<int64_t>(data.rank(), 1) - 1) + "], but got " +
                            std::to_string(axis) + ")");
  Segments s;
  s.O = 1, s.I = 1, s.J = data.dims[axis];
  for (int64_t d = 0; d < axis; ++d) s.O *= data.dims[d];
  for (int64_t d = axis + 1; d < data.rank(); ++d) s.I *= data.dims[d];
  int64_t n = bounds.type.dims.back();
  Value bd = b.reshape(b.convert(bounds, DType::I64), {s.O, n});
  if (lengths) {
    s.S = n;
    Value ends = bd;  // inclusive prefix sum along the segments
    for (int64_t shift = 1; shift < n; shift *= 2) {
      Value padded = b.pad(ends, b.constant_int(DType::I64, 0), {0, shift}, {0, 0}, {0, 0});
      ends = b.add(ends, b.slice(padded, {0, 0}, {s.O, n}, {1, 1}));
    }
    s.end = ends;
    s.start = b.subtract(ends, bd);
  } else {
    s.S = n - 1;
    s.start = b.slice(bd, {0, 0}, {s.O, n - 1}, {1, 1});
    s.end = b.slice(bd, {0, 1}, {s.O, n}, {1, 1});
  }
  TensorType mt(DType::I64, {s.O, s.S, s.J});
  Value j = b.iota(mt, 2);
  Value st = b.broadcast_in_dim(s.start, mt.dims, {0, 1}), en = b.broadcast_in_dim(s.end, mt.dims, {0, 1});
  s.mask = logical_and(b, b.compare(st, j, "LE"), b.compare(j, en, "LT"));
  return s;
}

// One step of the CPU's fold: acc op x, in x's dtype (half types computed in f32, rounded).
Value fold_step(Builder& b, Reduce r, const Value& acc, const Value& x) {
  if (r == Reduce::Max || r == Reduce::Min) {  // NaN in x wins; std::max/min keep acc on ties and NaN acc
    Value better = r == Reduce::Max ? b.compare(acc, x, "LT") : b.compare(x, acc, "LT");
    return b.select(logical_or(b, is_nan(b, x), better), x, acc);
  }
  DType ct = compute_type(x.type.dtype);
  Value a = b.convert(acc, ct), v = b.convert(x, ct);
  return b.convert(r == Reduce::Prod ? b.multiply(a, v) : b.add(a, v), x.type.dtype);
}

double identity(Reduce r) {
  if (r == Reduce::Max) return -std::numeric_limits<double>::infinity();
  if (r == Reduce::Min) return std::numeric_limits<double>::infinity();
  return r == Reduce::Prod ? 1.0 : 0.0;
}

void require_floating(const TensorType& data) {
  if (!hlo::is_float(data.dtype)) not_implemented_for("_segment_reduce_cpu", data.dtype);
}

// segment_reduce(data, reduce, *, lengths?, indices?, offsets?, axis, unsafe, initial?)
TORCH_TPU_LOWERING("segment_reduce", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& data = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  Reduce r = reduction_of(c.arg(1).s);
  if (!c.arg(3).is_none()) throw std::invalid_argument("segment_reduce(): indices based reduction is not supported yet.");
  const Value *lengths = optional_operand(c, v, 2), *offsets = optional_operand(c, v, 4);
  if (!lengths && !offsets) throw std::invalid_argument("segment_reduce(): Either lengths or offsets must be defined.");
  int64_t axis = wrap_dim(c.arg(5).i, data.type.rank());
  Segments s = segments(b, c, data.type, offsets ? nullptr : lengths, offsets, axis,
                        offsets ? "_segment_reduce_offsets_cpu_kernel1" : "_segment_reduce_lengths_cpu_kernel1");
  require_floating(data.type);
  if (lengths && !offsets && !c.arg(6).b) {  // !unsafe: the CPU's checks, raised at the next synchronization
    runtime_check(b, b.compare(b.convert(*lengths, DType::I64), b.splat_int(lengths->type.with_dtype(DType::I64), 0), "LT"),
                  "lengths contains negative value!");
    Value total = b.reshape(b.slice(s.end, {0, std::max<int64_t>(s.S - 1, 0)}, {s.O, s.S}, {1, 1}), {s.O});
    if (s.S == 0) total = b.splat_int(TensorType(DType::I64, {s.O}), 0);
    runtime_check(b, b.compare(total, b.splat_int(total.type, s.J), "NE"),
                  "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) "
                  "when !unsafe.");
  }
  if (out.numel() == 0) return Values{b.splat_float(out, 0)};
  DType dt = data.type.dtype;
  const Value* initial = optional_operand(c, v, 7);
  TensorType acc_t(dt, {s.O, s.S, s.I});
  Value init = initial ? b.broadcast_to(b.convert(*initial, dt), acc_t.dims) : b.splat_float(acc_t, identity(r));
  Value x = b.reshape(data, {s.O, s.J, s.I});
  Value acc = init;
  if (s.J > 0) {
    TensorType scalar_i(DType::I64, {});
    std::vector<TensorType> carry{scalar_i, acc_t, x.type, s.mask.type};
    Values loop = b.emit(
        "while", {b.constant_int(DType::I64, 0), init, x, s.mask}, "", carry,
        {{carry, [J = s.J](Builder& rb, const Values& q) {
            return Values{rb.compare(q[0], rb.constant_int(DType::I64, J), "LT")};
          }},
         {carry, [r, s](Builder& rb, const Values& q) {
            Value zero = rb.constant_int(DType::I64, 0);
            Value xj = rb.dynamic_slice(q[2], {zero, q[0], zero}, {s.O, 1, s.I});  // [O, 1, I]
            Value mj = rb.dynamic_slice(q[3], {zero, zero, q[0]}, {s.O, s.S, 1});  // [O, S, 1]
            Value xb = rb.broadcast_in_dim(rb.reshape(xj, {s.O, s.I}), q[1].type.dims, {0, 2});
            Value mb = rb.broadcast_in_dim(rb.reshape(mj, {s.O, s.S}), q[1].type.dims, {0, 1});
            Value next = rb.select(mb, fold_step(rb, r, q[1], xb), q[1]);
            return Values{rb.add(q[0], rb.constant_int(DType::I64, 1)), next, q[2], q[3]};
          }}});
    acc = loop[1];
  }
  if (r == Reduce::Mean) {  // empty without initial: NaN; else the sum over the length, NaN kept
    Value len = b.broadcast_in_dim(b.subtract(s.end, s.start), acc_t.dims, {0, 1});
    Value lenf = b.convert(len, compute_type(dt));
    Value divided = b.convert(b.divide(b.convert(acc, compute_type(dt)), lenf), dt);
    Value positive = b.compare(len, b.splat_int(len.type, 0), "GT");
    acc = b.select(logical_and(b, positive, logical_not(b, is_nan(b, acc))), divided, acc);
    if (!initial) acc = b.select(b.compare(len, b.splat_int(len.type, 0), "EQ"), b.splat_float(acc_t, std::nan("")), acc);
  }
  return Values{b.reshape(acc, out.dims)};
});

// _segment_reduce_backward(grad, output, data, reduce, *, lengths?, offsets?, axis, initial?)
TORCH_TPU_LOWERING("_segment_reduce_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& data = operand(c, v, 2);
  const TensorType& out = c.outputs[0];
  wrap_dim(c.arg(6).i, data.type.rank());  // the CPU's first check; its kernel then reduces over the bounds' last dim
  const Value *lengths = optional_operand(c, v, 4), *offsets = optional_operand(c, v, 5);
  if (!lengths && !offsets) throw std::invalid_argument("segment_reduce(): Either lengths or offsets must be defined.");
  Reduce r = reduction_of(c.arg(3).s);
  Segments s = segments(b, c, data.type, offsets ? nullptr : lengths, offsets, -1,
                        offsets ? "_segment_reduce_cpu_offsets_backward_kernel1"
                                : "_segment_reduce_cpu_lengths_backward_kernel1");
  require_floating(data.type);
  if (out.numel() == 0 || s.S == 0) return Values{b.splat_float(out, 0)};
  DType dt = out.dtype, ct = compute_type(dt);
  std::vector<int64_t> full{s.O, s.S, s.J, s.I};
  Value x = b.convert(b.reshape(data, {s.O, s.J, s.I}), dt);
  Value g = b.convert(b.reshape(operand(c, v, 0), {s.O, s.S, s.I}), dt);
  Value o = b.convert(b.reshape(operand(c, v, 1), {s.O, s.S, s.I}), dt);
  Value m = b.broadcast_in_dim(s.mask, full, {0, 1, 2});
  Value xf = b.broadcast_in_dim(x, full, {0, 2, 3}), gf = b.broadcast_in_dim(g, full, {0, 1, 3});
  Value zero = b.splat_float(TensorType(dt, full), 0);
  auto over_segments = [&](const Value& t) {  // [O, S, J, I] -> [O, J, I]: each j is in at most one segment
    return b.reduce({t}, {b.constant_float(t.type.dtype, 0)}, {1},
                    [](Builder& rb, const Values& q) { return Values{rb.add(q[0], q[1])}; })[0];
  };
  auto in_dt = [&](const Value& a) { return b.convert(a, dt); };
  Value gi;
  if (r == Reduce::Sum) {
    gi = over_segments(b.select(m, gf, zero));
  } else if (r == Reduce::Mean) {
    Value len = b.convert(b.broadcast_in_dim(b.subtract(s.end, s.start), g.type.dims, {0, 1}), ct);
    Value gm = in_dt(b.divide(b.convert(g, ct), len));
    gi = over_segments(b.select(m, b.broadcast_in_dim(gm, full, {0, 1, 3}), zero));
  } else if (r == Reduce::Max || r == Reduce::Min) {
    // Every element equal to the result (or NaN) takes the gradient; with two
    // or more, the positive ones are divided by their count (the CPU's rule).
    Value of = b.broadcast_in_dim(o, full, {0, 1, 3});
    Value hit = logical_and(b, m, logical_or(b, is_nan(b, xf), b.compare(xf, of, "EQ")));
    Value count = b.reduce({b.convert(hit, DType::I64)}, {b.constant_int(DType::I64, 0)}, {2},
                           [](Builder& rb, const Values& q) { return Values{rb.add(q[0], q[1])}; })[0];  // [O, S, I]
    Value cf = b.broadcast_in_dim(count, full, {0, 1, 3});
    Value share = b.select(hit, gf, zero);
    Value divided = in_dt(b.divide(b.convert(share, ct), b.convert(cf, ct)));
    Value many = logical_and(b, b.compare(cf, b.splat_int(cf.type, 2), "GE"), b.compare(share, zero, "GT"));
    gi = over_segments(b.select(many, divided, share));
  } else {  // prod: grad * output / x, or the product of the segment's other elements where x is 0 or NaN
    Value of = b.broadcast_in_dim(o, full, {0, 1, 3});
    Value gv = in_dt(b.multiply(b.convert(gf, ct), b.convert(of, ct)));
    Value quotient = in_dt(b.divide(b.convert(gv, ct), b.convert(xf, ct)));
    // Exclusive products: [O, S, J(j), J(k), I], over k in the segment, k != j.
    std::vector<int64_t> pair{s.O, s.S, s.J, s.J, s.I};
    Value mk = b.broadcast_in_dim(s.mask, pair, {0, 1, 3});
    TensorType it(DType::I64, pair);
    Value other = logical_and(b, mk, b.compare(b.iota(it, 2), b.iota(it, 3), "NE"));
    Value xk = b.convert(b.broadcast_in_dim(x, pair, {0, 3, 4}), ct);
    const Value* initial = optional_operand(c, v, 7);
    Value start = initial ? b.convert(*initial, ct) : b.constant_float(ct, 1);
    Value excl = b.reduce({b.select(other, xk, b.splat_float(xk.type, 1))}, {b.constant_float(ct, 1)}, {3},
                          [](Builder& rb, const Values& q) { return Values{rb.multiply(q[0], q[1])}; })[0];
    excl = in_dt(b.multiply(b.broadcast_to(start, excl.type.dims), excl));
    Value special = logical_or(b, is_nan(b, xf), b.compare(xf, zero, "EQ"));
    Value via_excl = in_dt(b.multiply(b.convert(gf, ct), b.convert(excl, ct)));
    gi = over_segments(b.select(m, b.select(special, via_excl, quotient), zero));
  }
  return Values{b.reshape(gi, out.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
