// CTC loss (_ctc_loss, _ctc_loss_backward; int[] and Tensor lengths) as the
// CPU's LossCTC.cpp computes it (Graves et al. 2006, in log space):
// * extended targets l'[b, s]: the blank at even s, target s/2 at odd s
//   (targets padded [B, K] or concatenated [sum(target_lengths)]);
// * alpha: row 0 is -inf but for s = 0, 1; then a stablehlo.while over t of
//   alpha[t, s] = logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2]
//   where l'[s-2] != l'[s]) + log_probs[t, l'[s]], with the CPU's max shift;
//   nll = -logsumexp of the last two alphas at t = input_length - 1 (the last
//   one alone for an empty target; 0 or inf for an empty input);
// * beta: the same recursion backwards from t = input_length - 1, per batch;
//   the gradient is exp(lp) - exp(logsumexp_{s: l'[s] = c}(alpha + beta) +
//   nll - lp), times the incoming gradient, 0 past input_length (and for the
//   whole batch entry with zero_infinity and an infinite nll).
// log_alpha past a batch entry's input length or extended target length is
// left uninitialized by the CPU; here it holds the continued recursion.
// zero_infinity's forward part (inf -> 0) is in the ctc_loss composite.
#include <limits>

#include "ops/elementwise_common.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A 1-D i64 constant.
Value constant_i64(Builder& b, const std::vector<int64_t>& xs) {
  TensorType t(DType::I64, {static_cast<int64_t>(xs.size())});
  if (xs.empty()) return b.splat_int(t, 0);
  std::string s = "value = dense<[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
  return b.emit1("constant", {}, s + "]> : " + t.str(), t);
}

// Lengths argument `i` as a [B] i64 value (int[] or Tensor overload).
Value lengths(Builder& b, const OpCall& c, const Values& v, size_t i, int64_t batch, const char* name) {
  const Arg& a = c.arg(i);
  if (a.kind == Arg::Kind::Tensor) {
    const Value& x = operand(c, v, i);
    if (!hlo::is_integral(x.type.dtype) || x.type.dtype == DType::Pred)
      throw std::invalid_argument(std::string(name) + " must be integral");
    if (x.type.numel() != batch) throw NotLowered(c.op + ": lengths of an unexpected size");
    return b.reshape(b.convert(x, DType::I64), {batch});
  }
  if (static_cast<int64_t>(a.ints.size()) != batch) throw NotLowered(c.op + ": lengths of an unexpected size");
  return constant_i64(b, a.ints);
}

Value clamp(Builder& b, const Value& x, int64_t lo, int64_t hi) {
  return b.minimum(b.maximum(x, b.splat_int(x.type, lo)), b.splat_int(x.type, hi));
}

// A shift along the last dim of [B, S]: result[s] = x[s - k] (k > 0) or x[s + |k|], `fill` outside.
Value shift(Builder& b, const Value& x, int64_t k, const Value& fill) {
  int64_t bt = x.type.dims[0], s = x.type.dims[1];
  if (k > 0) return b.slice(b.pad(x, fill, {0, k}, {0, 0}, {0, 0}), {0, 0}, {bt, s}, {1, 1});
  return b.slice(b.pad(x, fill, {0, 0}, {0, -k}, {0, 0}), {0, -k}, {bt, s - k}, {1, 1});
}

struct Ctc {
  int64_t T, B, C, S;
  DType dt;
  Value lp;     // [T, B, C]
  Value il, tl; // [B] i64
  Value lab;    // [B, S] i64 extended targets (clamped into [0, C))
  Value lpl;    // [T, B, S] log_probs at the extended targets
};

Ctc setup(Builder& b, const OpCall& c, const Values& v, size_t lp_arg, size_t tg_arg, size_t il_arg, size_t tl_arg,
          int64_t S, int64_t blank, const char* kernel) {
  const Value& lp = operand(c, v, lp_arg);
  const Value& tg = operand(c, v, tg_arg);
  DType dt = lp.type.dtype;
  if (dt != DType::F32 && dt != DType::F64) not_implemented_for(kernel, dt);
  if (lp.type.rank() != 3) throw NotLowered(c.op + ": 3-D log_probs expected");
  if (tg.type.rank() != 1 && tg.type.rank() != 2) throw NotLowered(c.op + ": 1-D or 2-D targets expected");
  if (!hlo::is_integral(tg.type.dtype)) throw NotLowered(c.op + ": integer targets expected");
  Ctc x{lp.type.dims[0], lp.type.dims[1], lp.type.dims[2], S, dt, lp, {}, {}, {}, {}};
  if (blank < 0 || blank >= x.C) throw std::invalid_argument("blank must be in label range");
  x.il = lengths(b, c, v, il_arg, x.B, "input_lengths");
  x.tl = lengths(b, c, v, tl_arg, x.B, "target_lengths");
  TensorType bs(DType::I64, {x.B, S});
  Value s_idx = b.iota(bs, 1);
  Value k = b.divide(b.subtract(s_idx, b.splat_int(bs, 1)), b.splat_int(bs, 2));  // target position at odd s
  int64_t L = (S - 1) / 2;
  k = clamp(b, k, 0, std::max<int64_t>(L - 1, 0));
  Value tgt = b.splat_int(bs, blank);
  Value t64 = b.convert(tg, DType::I64);
  int64_t tn = tg.type.numel();
  if (tn > 0 && L > 0) {
    Value pos;
    if (tg.type.rank() == 1) {
      Value ends = x.tl;  // inclusive prefix sum -> exclusive offsets
      for (int64_t sh = 1; sh < x.B; sh *= 2) {
        Value padded = b.pad(ends, b.constant_int(DType::I64, 0), {sh}, {0}, {0});
        ends = b.add(ends, b.slice(padded, {0}, {x.B}, {1}));
      }
      Value offs = b.subtract(ends, x.tl);
      pos = b.add(b.broadcast_in_dim(offs, bs.dims, {0}), k);
    } else {
      int64_t K = tg.type.dims[1];
      pos = b.add(b.multiply(b.iota(bs, 0), b.splat_int(bs, K)), k);
    }
    tgt = b.gather_elements_1d(b.reshape(t64, {tn}), clamp(b, pos, 0, tn - 1));
  }
  Value is_even = b.compare(b.subtract(s_idx, b.multiply(b.divide(s_idx, b.splat_int(bs, 2)), b.splat_int(bs, 2))),
                            b.splat_int(bs, 0), "EQ");
  x.lab = clamp(b, b.select(is_even, b.splat_int(bs, blank), tgt), 0, x.C - 1);
  if (x.T * x.B * S > 0) {
    std::vector<int64_t> tbs{x.T, x.B, S};
    TensorType it(DType::I64, tbs);
    Value flat = b.add(b.multiply(b.add(b.multiply(b.iota(it, 0), b.splat_int(it, x.B)), b.iota(it, 1)),
                                  b.splat_int(it, x.C)),
                       b.broadcast_in_dim(x.lab, tbs, {1, 2}));
    x.lpl = b.gather_elements_1d(b.reshape(lp, {x.T * x.B * x.C}), flat);
  } else {
    x.lpl = b.splat_float(TensorType(dt, {x.T, x.B, S}), 0);
  }
  return x;
}

// log(exp(a - m) + exp(b - m) + exp(c - m)) + m with m the max (0 if -inf).
Value lse3(Builder& b, const Value& a, const Value& p, const Value& q) {
  Value m = b.maximum(b.maximum(a, p), q);
  Value ninf = b.splat_float(m.type, -kInf);
  m = b.select(b.compare(m, ninf, "EQ"), b.splat_float(m.type, 0), m);
  Value e = b.add(b.add(b.unary("exponential", b.subtract(a, m)), b.unary("exponential", b.subtract(p, m))),
                  b.unary("exponential", b.subtract(q, m)));
  return b.add(b.unary("log", e), m);
}

Value lse2(Builder& b, const Value& a, const Value& p) {
  Value m = b.maximum(a, p);
  m = b.select(b.compare(m, b.splat_float(m.type, -kInf), "EQ"), b.splat_float(m.type, 0), m);
  Value e = b.add(b.unary("exponential", b.subtract(a, m)), b.unary("exponential", b.subtract(p, m)));
  return b.add(b.unary("log", e), m);
}

// Element [b, at[b]] of x [B, S] (at clamped).
Value pick(Builder& b, const Value& x, const Value& at) {
  int64_t bt = x.type.dims[0], s = x.type.dims[1];
  TensorType t(DType::I64, {bt});
  Value flat = b.add(b.multiply(b.iota(t, 0), b.splat_int(t, s)), clamp(b, at, 0, s - 1));
  return b.gather_elements_1d(b.reshape(x, {bt * s}), flat);
}

// The extended-target pairs s-2 -> s with different labels: [B, S] pred.
Value skip_allowed(Builder& b, const Ctc& x) {
  TensorType bs(DType::I64, {x.B, x.S});
  Value prev2 = shift(b, x.lab, 2, b.constant_int(DType::I64, -1));
  return logical_and(b, b.compare(b.iota(bs, 1), b.splat_int(bs, 1), "GT"), b.compare(prev2, x.lab, "NE"));
}

// _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity) -> (nll, log_alpha)
Values ctc_forward(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& nll_t = c.outputs[0];
  const TensorType& la_t = c.outputs[1];  // [B, T, S]
  int64_t S = la_t.dims.at(2), blank = c.arg(4).i;
  Ctc x = setup(b, c, v, 0, 1, 2, 3, S, blank, "ctc_loss_cpu");
  DType dt = x.dt;
  TensorType bst(dt, {x.B, S});
  TensorType bsi(DType::I64, {x.B, S});
  TensorType bt(DType::I64, {x.B});
  Value ninf = b.splat_float(bst, -kInf);
  Value zero_b = b.splat_int(bt, 0);
  Value il_pos = b.compare(x.il, zero_b, "GT");
  if (x.B == 0 || x.T == 0) {
    Value nll = b.select(b.compare(x.tl, zero_b, "EQ"), b.splat_float(TensorType(dt, {x.B}), 0),
                         b.splat_float(TensorType(dt, {x.B}), kInf));
    return Values{b.reshape(nll, nll_t.dims), b.splat_float(la_t, 0)};
  }
  std::vector<int64_t> tbs{x.T, x.B, S};
  TensorType all_t(dt, tbs);
  // row 0
  Value lp0 = b.reshape(b.slice(x.lpl, {0, 0, 0}, {1, x.B, S}, {1, 1, 1}), {x.B, S});
  Value s_idx = b.iota(bsi, 1);
  Value init = b.select(b.compare(s_idx, b.splat_int(bsi, 0), "EQ"), lp0, ninf);
  Value tl_pos = b.broadcast_in_dim(b.compare(x.tl, zero_b, "GT"), bsi.dims, {0});
  init = b.select(logical_and(b, tl_pos, b.compare(s_idx, b.splat_int(bsi, 1), "EQ")), lp0, init);
  init = b.select(b.broadcast_in_dim(il_pos, bsi.dims, {0}), init, ninf);
  Value all = b.dynamic_update_slice(b.splat_float(all_t, -kInf), b.reshape(init, {1, x.B, S}),
                                     {b.constant_int(DType::I64, 0), b.constant_int(DType::I64, 0),
                                      b.constant_int(DType::I64, 0)});
  if (x.T > 1) {
    Value skip = skip_allowed(b, x);
    TensorType scalar_i(DType::I64, {});
    std::vector<TensorType> carry{scalar_i, bst, all_t, all_t, skip.type};
    int64_t T = x.T, B = x.B;
    Values loop = b.emit(
        "while", {b.constant_int(DType::I64, 1), init, all, x.lpl, skip}, "", carry,
        {{carry, [T](Builder& r, const Values& q) { return Values{r.compare(q[0], r.constant_int(DType::I64, T), "LT")}; }},
         {carry, [B, S](Builder& r, const Values& q) {
            Value z = r.constant_int(DType::I64, 0);
            Value ni = r.splat_float(q[1].type, -kInf);
            Value la2 = shift(r, q[1], 1, r.constant_float(q[1].type.dtype, -kInf));
            Value la3 = r.select(q[4], shift(r, q[1], 2, r.constant_float(q[1].type.dtype, -kInf)), ni);
            Value lpt = r.reshape(r.dynamic_slice(q[3], {q[0], z, z}, {1, B, S}), {B, S});
            Value next = r.add(lse3(r, q[1], la2, la3), lpt);
            Value all2 = r.dynamic_update_slice(q[2], r.reshape(next, {1, B, S}), {q[0], z, z});
            return Values{r.add(q[0], r.constant_int(DType::I64, 1)), next, all2, q[3], q[4]};
          }}});
    all = loop[2];
  }
  // the row at t = input_length - 1 of each batch entry
  TensorType it(DType::I64, {x.B, S});
  Value tsel = clamp(b, b.subtract(x.il, b.splat_int(bt, 1)), 0, x.T - 1);
  Value flat = b.add(b.multiply(b.add(b.multiply(b.broadcast_in_dim(tsel, it.dims, {0}), b.splat_int(it, x.B)),
                                      b.iota(it, 0)),
                                b.splat_int(it, S)),
                     b.iota(it, 1));
  Value last = b.gather_elements_1d(b.reshape(all, {x.T * x.B * S}), flat);  // [B, S]
  Value two_tl = b.multiply(x.tl, b.splat_int(bt, 2));
  Value l1 = pick(b, last, two_tl), l2 = pick(b, last, b.subtract(two_tl, b.splat_int(bt, 1)));
  TensorType vt(dt, {x.B});
  Value ll = b.select(b.compare(x.tl, zero_b, "EQ"), pick(b, last, zero_b), lse2(b, l1, l2));
  Value empty_in = b.select(b.compare(x.tl, zero_b, "EQ"), b.splat_float(vt, 0), b.splat_float(vt, -kInf));
  ll = b.select(il_pos, ll, empty_in);
  Value la_out = b.transpose(all, {1, 0, 2});
  return Values{b.reshape(b.negate(ll), nll_t.dims), b.reshape(la_out, la_t.dims)};
}

TORCH_TPU_LOWERING("_ctc_loss", ctc_forward);
TORCH_TPU_LOWERING("_ctc_loss.Tensor", ctc_forward);

// _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths,
// neg_log_likelihood, log_alpha, blank, zero_infinity)
Values ctc_backward(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& la_in = operand(c, v, 6);
  if (la_in.type.rank() != 3) throw NotLowered(c.op + ": 3-D log_alpha expected");
  int64_t S = la_in.type.dims[2], blank = c.arg(7).i;
  bool zero_inf = c.arg(8).b;
  Ctc x = setup(b, c, v, 1, 2, 3, 4, S, blank, "ctc_loss_backward_cpu");
  DType dt = x.dt;
  if (la_in.type.dims[0] != x.B || la_in.type.dims[1] != x.T)
    throw NotLowered(c.op + ": log_alpha of an unexpected shape");
  if (out.numel() == 0) return Values{b.splat_float(out, 0)};
  if (S == 0) throw NotLowered(c.op + ": empty log_alpha");
  TensorType bst(dt, {x.B, S});
  TensorType bsi(DType::I64, {x.B, S});
  TensorType bt(DType::I64, {x.B});
  std::vector<int64_t> tbs{x.T, x.B, S};
  TensorType all_t(dt, tbs);
  Value s_idx = b.iota(bsi, 1);
  Value two_tl = b.broadcast_in_dim(b.multiply(x.tl, b.splat_int(bt, 2)), bsi.dims, {0});
  Value lab2 = shift(b, x.lab, -2, b.constant_int(DType::I64, -1));
  Value lt2 = b.compare(s_idx, two_tl, "LT");                                   // lb2 allowed
  Value skip = logical_and(b, b.compare(s_idx, b.subtract(two_tl, b.splat_int(bsi, 1)), "LT"),
                           b.compare(lab2, x.lab, "NE"));                        // lb3 allowed
  Value at_end = logical_or(b, b.compare(s_idx, two_tl, "EQ"),
                            logical_and(b, b.compare(s_idx, b.subtract(two_tl, b.splat_int(bsi, 1)), "EQ"),
                                        b.compare(two_tl, b.splat_int(bsi, 0), "GT")));  // the initial beta entries
  Value in_s = b.compare(s_idx, two_tl, "LE");
  TensorType scalar_i(DType::I64, {});
  std::vector<TensorType> carry{scalar_i, bst, all_t, all_t, bsi, lt2.type, lt2.type, lt2.type, lt2.type};
  int64_t B = x.B, T = x.T;
  Value il_b = b.broadcast_in_dim(x.il, bsi.dims, {0});
  Values loop = b.emit(
      "while",
      {b.constant_int(DType::I64, T - 1), b.splat_float(bst, -kInf), b.splat_float(all_t, -kInf), x.lpl, il_b, lt2,
       skip, at_end, in_s},
      "", carry,
      {{carry, [](Builder& r, const Values& q) { return Values{r.compare(q[0], r.constant_int(DType::I64, 0), "GE")}; }},
       {carry, [B, S](Builder& r, const Values& q) {
          Value z = r.constant_int(DType::I64, 0);
          DType d = q[1].type.dtype;
          Value ni = r.splat_float(q[1].type, -kInf);
          Value lpt = r.reshape(r.dynamic_slice(q[3], {q[0], z, z}, {1, B, S}), {B, S});
          Value lb2 = r.select(q[5], shift(r, q[1], -1, r.constant_float(d, -kInf)), ni);
          Value lb3 = r.select(q[6], shift(r, q[1], -2, r.constant_float(d, -kInf)), ni);
          Value rec = r.add(lse3(r, q[1], lb2, lb3), lpt);
          Value tb = r.broadcast_to(q[0], q[4].type.dims);
          Value tp1 = r.add(tb, r.splat_int(q[4].type, 1));
          Value is_last = r.compare(tp1, q[4], "EQ");  // t == input_length - 1
          Value before = r.compare(tp1, q[4], "LT");   // t < input_length - 1
          Value row = r.select(before, rec, ni);
          row = r.select(is_last, r.select(q[7], lpt, ni), row);
          row = r.select(q[8], row, ni);
          Value all2 = r.dynamic_update_slice(q[2], r.reshape(row, {1, B, S}), {q[0], z, z});
          return Values{r.subtract(q[0], r.constant_int(DType::I64, 1)), row, all2, q[3], q[4], q[5], q[6], q[7], q[8]};
        }}});
  Value beta = loop[2];  // [T, B, S]
  Value alpha = b.transpose(b.convert(la_in, dt), {1, 0, 2});
  Value ab = b.add(alpha, beta);
  Value lcab_holder;
  TensorType it(DType::I64, tbs);
  Value valid = logical_and(b, b.compare(b.iota(it, 0), b.broadcast_in_dim(x.il, tbs, {1}), "LT"),
                            b.broadcast_in_dim(in_s, tbs, {1, 2}));
  ab = b.select(valid, ab, b.splat_float(all_t, -kInf));
  // log-sum over the s of each label, in the CPU's order (s descending, its
  // pairwise log-add): [T, B, C]
  std::vector<int64_t> tbc{x.T, x.B, x.C};
  TensorType acc_t(dt, tbc);
  {
    int64_t C = x.C;
    std::vector<TensorType> carry2{scalar_i, acc_t, all_t, x.lab.type};
    Values coll = b.emit(
        "while", {b.constant_int(DType::I64, S - 1), b.splat_float(acc_t, -kInf), ab, x.lab}, "", carry2,
        {{carry2, [](Builder& r, const Values& q) { return Values{r.compare(q[0], r.constant_int(DType::I64, 0), "GE")}; }},
         {carry2, [T, B, C](Builder& r, const Values& q) {
            Value z = r.constant_int(DType::I64, 0);
            std::vector<int64_t> dims{T, B, C};
            Value xs = r.broadcast_in_dim(r.reshape(r.dynamic_slice(q[2], {z, z, q[0]}, {T, B, 1}), {T, B}), dims, {0, 1});
            Value ls = r.reshape(r.dynamic_slice(q[3], {z, q[0]}, {B, 1}), {B});
            TensorType ci(DType::I64, dims);
            Value hit = r.compare(r.iota(ci, 2), r.broadcast_in_dim(ls, dims, {1}), "EQ");
            const Value& acc = q[1];
            Value ni = r.splat_float(acc.type, -kInf);
            Value m = r.maximum(acc, xs);
            Value added = r.add(r.unary("log", r.add(r.unary("exponential", r.subtract(acc, m)),
                                                     r.unary("exponential", r.subtract(xs, m)))),
                                m);
            Value next = r.select(r.compare(acc, ni, "EQ"), xs, added);
            return Values{r.subtract(q[0], r.constant_int(DType::I64, 1)), r.select(hit, next, acc), q[2], q[3]};
          }}});
    lcab_holder = coll[1];
  }
  Value lcab = lcab_holder;
  Value lp = b.convert(x.lp, dt);
  Value nll = b.broadcast_in_dim(b.reshape(b.convert(operand(c, v, 5), dt), {x.B}), tbc, {1});
  Value gr = b.broadcast_in_dim(b.reshape(b.convert(operand(c, v, 0), dt), {x.B}), tbc, {1});
  Value res = b.multiply(b.subtract(b.unary("exponential", lp),
                                    b.unary("exponential", b.subtract(b.add(lcab, nll), lp))),
                         gr);
  TensorType ct3(DType::I64, tbc);
  Value live = b.compare(b.iota(ct3, 0), b.broadcast_in_dim(x.il, tbc, {1}), "LT");
  if (zero_inf) live = logical_and(b, live, b.compare(nll, b.splat_float(nll.type, kInf), "NE"));
  res = b.select(live, res, b.splat_float(res.type, 0));
  return Values{b.reshape(res, out.dims)};
}

TORCH_TPU_LOWERING("_ctc_loss_backward", ctc_backward);
TORCH_TPU_LOWERING("_ctc_loss_backward.Tensor", ctc_backward);

}  // namespace
}  // namespace torch_tpu::ops
