// Reductions without indices: sum, mean, prod, amax/amin, all/any, var/std,
// logsumexp, vector norms. The result's dtype and shape (keepdim included)
// come from the meta kernel, so every rule reduces over its dims in the
// CPU's accumulation type and reshapes/converts into call.outputs[0].
#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/torch_dtype_name.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The dims an `int[]? dim` argument reduces over; None (and, unless
// `empty_is_none` is false, []) means every dim. A 0-d input accepts dim 0/-1
// and reduces over nothing.
std::vector<int64_t> reduced_dims(const Arg& a, int64_t rank, bool empty_is_all = true) {
  std::set<int64_t> dims;
  if (a.is_none() || (a.kind == Arg::Kind::IntList && a.ints.empty() && empty_is_all)) {
    for (int64_t i = 0; i < rank; ++i) dims.insert(i);
  } else {
    std::vector<int64_t> ds = a.kind == Arg::Kind::Int ? std::vector<int64_t>{a.i} : a.ints;
    for (int64_t d : ds) {
      if (rank == 0) continue;
      dims.insert(d < 0 ? d + rank : d);  // range errors come from the meta kernel
    }
  }
  return {dims.begin(), dims.end()};
}

int64_t count(const TensorType& t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= t.dims.at(d);
  return n;
}

// maximum/minimum that propagate NaN like the CPU: the XLA CPU plugin's
// maximum/minimum may drop NaNs (fast min/max).
Value nan_extreme(Builder& r, const Value& a, const Value& b, bool is_max) {
  if (!hlo::is_float(a.type.dtype)) return r.binary(is_max ? "maximum" : "minimum", a, b);
  Value take_a = r.binary("or", r.compare(a, b, is_max ? "GT" : "LT"), r.compare(a, a, "NE"));
  return r.select(take_a, a, b);
}

// reduce(x, init, op) over `dims`, with op a binary StableHLO op name
// ("maximum"/"minimum" propagate NaN).
Value reduce1(Builder& b, const Value& x, const std::vector<int64_t>& dims, const Value& init,
              const std::string& op) {
  return b.reduce({x}, {init}, dims, [op](Builder& r, const Values& a) {
    if (op == "maximum" || op == "minimum") return Values{nan_extreme(r, a[0], a[1], op == "maximum")};
    return Values{r.binary(op, a[0], a[1])};
  })[0];
}

Value lowest(Builder& b, DType t) {
  if (hlo::is_float(t)) return b.constant_float(t, -kInf);
  if (t == DType::Pred) return b.constant_bool(false);
  if (hlo::is_unsigned(t)) return b.constant_int(t, 0);
  return b.constant_int(t, hlo::dtype_bits(t) == 64 ? std::numeric_limits<int64_t>::min()
                                                    : -(int64_t{1} << (hlo::dtype_bits(t) - 1)));
}

Value highest(Builder& b, DType t) {
  if (hlo::is_float(t)) return b.constant_float(t, kInf);
  if (t == DType::Pred) return b.constant_bool(true);
  int bits = hlo::dtype_bits(t);
  if (hlo::is_unsigned(t)) return b.constant_int(t, bits == 64 ? -1 : (int64_t{1} << bits) - 1);
  return b.constant_int(t, bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1);
}

Value finish(Builder& b, const Value& r, const TensorType& out) {
  return b.reshape(b.convert(r, out.dtype), out.dims);
}

// sum/prod-like: input converted to the result's compute type (half types
// accumulate in float32 like the CPU; bool/int inputs already promoted to
// int64 by the meta kernel's result dtype).
Value accumulate(Builder& b, const Value& x, const std::vector<int64_t>& dims, DType out,
                 const std::string& op, double init) {
  DType acc = compute_type(out);
  return reduce1(b, b.convert(x, acc), dims, b.constant_float(acc, init), op);
}

// Reduced dims of an op with a full form `op(self, *, dtype)` and a dim form
// `op.dim(self, dim, keepdim, *, dtype)`: only the dim form has more than 2 args.
std::vector<int64_t> dims_of_overload(const OpCall& c, const Value& x) {
  return reduced_dims(c.args.size() > 2 ? c.arg(1) : Arg{}, x.type.rank());
}

// sum.dim_IntList(self, dim?, keepdim, *, dtype) / sum(self, *, dtype)
Values sum_rule(Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  auto dims = dims_of_overload(c, x);
  return {finish(b, accumulate(b, x, dims, c.outputs[0].dtype, "add", 0), c.outputs[0])};
}
TORCH_TPU_ACCEPTS_COMPLEX("sum", "sum.dim_IntList", "mean", "mean.dim", "prod", "prod.dim_int",
                          "count_nonzero.dim_IntList", "all", "all.dim", "all.dims", "any", "any.dim", "any.dims",
                          "var.correction", "std.correction", "var_mean.correction", "std_mean.correction",
                          "linalg_vector_norm", "norm.Scalar", "norm.ScalarOpt_dim", "norm.ScalarOpt_dtype",
                          "norm.ScalarOpt_dim_dtype");

TORCH_TPU_LOWERING("sum", sum_rule);
TORCH_TPU_LOWERING("sum.dim_IntList", sum_rule);

// nansum(self, dim?, keepdim, *, dtype): NaNs count as zero.
TORCH_TPU_LOWERING("nansum", [](Builder& b, const OpCall& c, const Values& v) {
  Value x = operand(c, v, 0);
  if (hlo::is_float(x.type.dtype))
    x = b.select(b.compare(x, x, "NE"), b.splat_float(x.type, 0), x);
  auto dims = reduced_dims(c.arg(1), x.type.rank());
  return Values{finish(b, accumulate(b, x, dims, c.outputs[0].dtype, "add", 0), c.outputs[0])};
});

// mean: the CPU sums in float32 for half types, divides, then rounds once.
Values mean_rule(Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  auto dims = dims_of_overload(c, x);
  Value s = accumulate(b, x, dims, c.outputs[0].dtype, "add", 0);
  Value n = b.splat_float(s.type, static_cast<double>(count(x.type, dims)));
  return {finish(b, b.divide(s, n), c.outputs[0])};
}
TORCH_TPU_LOWERING("mean", mean_rule);
TORCH_TPU_LOWERING("mean.dim", mean_rule);

// prod(self, *, dtype) / prod.dim_int(self, dim, keepdim, *, dtype)
Values prod_rule(Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  auto dims = dims_of_overload(c, x);
  return {finish(b, accumulate(b, x, dims, c.outputs[0].dtype, "multiply", 1), c.outputs[0])};
}
TORCH_TPU_LOWERING("prod", prod_rule);
TORCH_TPU_LOWERING("prod.dim_int", prod_rule);

// amax/amin/max/min (NaN propagates, see nan_extreme).
// Bool uses or/and (max/min of i1).
Value extreme(Builder& b, const Value& x, const std::vector<int64_t>& dims, bool is_max) {
  DType t = x.type.dtype;
  if (t == DType::Pred) return reduce1(b, x, dims, b.constant_bool(!is_max), is_max ? "or" : "and");
  return reduce1(b, x, dims, is_max ? lowest(b, t) : highest(b, t), is_max ? "maximum" : "minimum");
}

template <bool kMax>
Values extreme_rule(Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  auto dims = c.args.size() > 1 ? reduced_dims(c.arg(1), x.type.rank()) : reduced_dims(Arg{}, x.type.rank());
  return {finish(b, extreme(b, x, dims, kMax), c.outputs[0])};
}
TORCH_TPU_LOWERING("amax", extreme_rule<true>);
TORCH_TPU_LOWERING("amin", extreme_rule<false>);
// max()/min() of every element: the CPU kernel (not the meta one) rejects
// empty input.
template <bool kMax>
Values full_extreme_rule(Builder& b, const OpCall& c, const Values& v) {
  if (operand(c, v, 0).type.numel() == 0)
    throw std::invalid_argument(std::string(kMax ? "max" : "min") +
                                "(): Expected reduction dim to be specified for input.numel() == 0. "
                                "Specify the reduction dim with the 'dim' argument.");
  return extreme_rule<kMax>(b, c, v);
}
TORCH_TPU_LOWERING("max", full_extreme_rule<true>);
TORCH_TPU_LOWERING("min", full_extreme_rule<false>);

// count_nonzero(Tensor self, int[] dim): [] counts over every dim, like sum.
TORCH_TPU_LOWERING("count_nonzero.dim_IntList", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  Value nz = b.convert(b.compare(x, b.splat_int(x.type, 0), "NE"), DType::I64);
  auto dims = reduced_dims(c.arg(1), x.type.rank());
  return Values{finish(b, reduce1(b, nz, dims, b.constant_int(DType::I64, 0), "add"), c.outputs[0])};
});

// aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (min, max)
TORCH_TPU_LOWERING("aminmax", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  auto dims = reduced_dims(c.arg(1), x.type.rank());
  if (x.type.numel() == 0 && (c.arg(1).is_none() || count(x.type, dims) == 0))
    throw std::invalid_argument("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                                "identity.");
  return Values{finish(b, extreme(b, x, dims, false), c.outputs[0]),
                finish(b, extreme(b, x, dims, true), c.outputs[1])};
});

// all/any: x != 0 reduced with and/or; the result is bool, or uint8 for
// uint8 input (the meta kernel's dtype).
template <bool kAll>
Values allany_rule(Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  // all.dims/any.dims: dim=[] reduces nothing (unlike sum's []).
  auto dims = c.args.size() > 1 ? reduced_dims(c.arg(1), x.type.rank(), false) : reduced_dims(Arg{}, x.type.rank());
  // An out= of another (non-bool) dtype: the CPU converts the input to it
  // first; it takes bool and uint8 results only.
  DType out = c.outputs[0].dtype;
  if (out != DType::Pred && out != DType::U8)
    throw std::invalid_argument(std::string(kAll ? "all" : "any") + " only supports bool tensor for result, got: " +
                                torch_dtype_name(out));
  Value in = out != DType::Pred && out != x.type.dtype ? b.convert(x, out) : x;
  Value r = reduce1(b, b.convert(in, DType::Pred), dims, b.constant_bool(kAll), kAll ? "and" : "or");
  return {finish(b, r, c.outputs[0])};
}
TORCH_TPU_LOWERING("all", allany_rule<true>);
TORCH_TPU_LOWERING("all.dim", allany_rule<true>);
TORCH_TPU_LOWERING("all.dims", allany_rule<true>);
TORCH_TPU_LOWERING("any", allany_rule<false>);
TORCH_TPU_LOWERING("any.dim", allany_rule<false>);
TORCH_TPU_LOWERING("any.dims", allany_rule<false>);

// var/std(self, dim?, *, correction?, keepdim) and the _mean forms: two-pass
// (mean, then squared deviations) in the compute type; the divisor is
// max(0, N - correction) with correction a runtime scalar (default 1). For
// complex input the mean is complex and the variance is the CPU's
// var(re) + var(im), each part's squared deviations summed and divided on
// their own (with no divisor left, 0 / 0 of a constant part makes it NaN).
struct Moments {
  Value var, mean;
};

Moments moments(Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  bool cplx = hlo::is_complex(x.type.dtype);
  if (!hlo::is_float(x.type.dtype) && !cplx)
    throw std::invalid_argument(c.op + ": only floating and complex inputs are supported");
  DType acc = compute_type(c.outputs[0].dtype);  // real (the variance's dtype)
  DType mean_acc = cplx ? x.type.dtype : acc;
  auto dims = reduced_dims(c.arg(1), x.type.rank());
  Value xa = b.convert(x, mean_acc);
  Value s = reduce1(b, xa, dims, b.constant_float(mean_acc, 0), "add");
  Value n = b.constant_float(acc, static_cast<double>(count(x.type, dims)));
  Value mean = b.divide(s, b.broadcast_to(b.convert(n, mean_acc), s.type.dims));
  // Broadcast the mean back over the reduced dims.
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < x.type.rank(); ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) kept.push_back(i);
  Value d = b.subtract(xa, b.broadcast_in_dim(mean, xa.type.dims, kept));
  auto sum_sq = [&](const Value& part) { return reduce1(b, b.multiply(part, part), dims, b.constant_float(acc, 0), "add"); };
  Value corr = c.arg(2).is_none() ? b.constant_float(acc, 1) : b.convert(operand(c, v, 2), acc);
  // The CPU's std::max(0, N - correction): a NaN difference gives 0 too.
  Value diff = b.subtract(n, corr), zero = b.constant_float(acc, 0);
  Value divisor = b.select(b.compare(diff, zero, "GT"), diff, zero);
  auto var = [&](const Value& part) {
    Value ss = sum_sq(part);
    return b.divide(ss, b.broadcast_to(divisor, ss.type.dims));
  };
  Value result = cplx ? b.add(var(b.real(d)), var(b.imag(d))) : var(d);
  // An empty input is NaN whatever the correction (the CPU fills it; a
  // negative correction would leave 0 / (0 - correction) = 0 here).
  if (x.type.numel() == 0) result = b.splat_float(result.type, std::numeric_limits<double>::quiet_NaN());
  return {result, mean};
}

TORCH_TPU_LOWERING("var.correction", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{finish(b, moments(b, c, v).var, c.outputs[0])};
});
TORCH_TPU_LOWERING("std.correction", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{finish(b, b.unary("sqrt", moments(b, c, v).var), c.outputs[0])};
});
TORCH_TPU_LOWERING("var_mean.correction", [](Builder& b, const OpCall& c, const Values& v) {
  Moments m = moments(b, c, v);
  return Values{finish(b, m.var, c.outputs[0]), finish(b, m.mean, c.outputs[1])};
});
TORCH_TPU_LOWERING("std_mean.correction", [](Builder& b, const OpCall& c, const Values& v) {
  Moments m = moments(b, c, v);
  return Values{finish(b, b.unary("sqrt", m.var), c.outputs[0]), finish(b, m.mean, c.outputs[1])};
});

// logsumexp(self, dim, keepdim): max-shifted like the CPU; an infinite max
// shifts by 0 so that all -inf (or +inf) rows give -inf (+inf), not NaN.
TORCH_TPU_LOWERING("logsumexp", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  DType acc = compute_type(c.outputs[0].dtype);
  auto dims = reduced_dims(c.arg(1), x.type.rank());
  Value xa = b.convert(x, acc);
  Value m = reduce1(b, xa, dims, b.constant_float(acc, -kInf), "maximum");
  Value inf = b.splat_float(m.type, kInf);
  m = b.select(b.compare(b.unary("abs", m), inf, "EQ"), b.splat_float(m.type, 0), m);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < x.type.rank(); ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) kept.push_back(i);
  Value e = b.unary("exponential", b.subtract(xa, b.broadcast_in_dim(m, xa.type.dims, kept)));
  Value s = reduce1(b, e, dims, b.constant_float(acc, 0), "add");
  return Values{finish(b, b.add(b.unary("log", s), m), c.outputs[0])};
});

// Vector p-norm of `x` over `dims`, with `ord` a runtime scalar (nullptr: 2),
// so one program covers every order and selects: inf/-inf take max/min |x|,
// 0 counts non-zeros, 1 sums |x|, 2 is sqrt(sum x^2), any other p is
// (sum |x|^p)^(1/p), the CPU's formulas.
Value vector_norm(Builder& b, const OpCall& c, const Value& x, const Value* ord, const std::vector<int64_t>& dims) {
  DType acc = compute_type(c.outputs[0].dtype);  // real, also for complex input
  Value a = hlo::is_complex(x.type.dtype)
                ? b.convert(magnitude(b, x), acc)
                : b.unary("abs", b.convert(x, acc));
  Value p = ord ? b.convert(*ord, acc) : b.constant_float(acc, 2);
  auto is = [&](const Value& o, double k) {
    return b.compare(o, b.broadcast_to(b.constant_float(acc, k), o.type.dims), "EQ");
  };
  Value pe = b.broadcast_to(p, a.type.dims);
  Value nonzero = b.convert(b.compare(a, b.splat_float(a.type, 0), "NE"), acc);
  Value term = b.select(is(pe, 0), nonzero,
                        b.select(is(pe, 1), a, b.select(is(pe, 2), b.multiply(a, a), b.binary("power", a, pe))));
  Value s = reduce1(b, term, dims, b.constant_float(acc, 0), "add");
  Value mx = reduce1(b, a, dims, b.constant_float(acc, 0), "maximum");
  Value mn = reduce1(b, a, dims, b.constant_float(acc, kInf), "minimum");
  Value ps = b.broadcast_to(p, s.type.dims);
  Value root = b.binary("power", s, b.divide(b.splat_float(s.type, 1), ps));
  Value r = b.select(is(ps, kInf), mx,
                     b.select(is(ps, -kInf), mn,
                              b.select(b.binary("or", is(ps, 0), is(ps, 1)), s,
                                       b.select(is(ps, 2), b.unary("sqrt", s), root))));
  return finish(b, r, c.outputs[0]);
}

// linalg_vector_norm(self, ord, dim?, keepdim, *, dtype)
TORCH_TPU_LOWERING("linalg_vector_norm", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  return Values{vector_norm(b, c, x, &operand(c, v, 1), reduced_dims(c.arg(2), x.type.rank()))};
});

// The older norm overloads: norm(self, p?, [dim, keepdim], [*, dtype]).
Values norm_rule(Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  bool has_dim = c.args.size() > 2 && c.arg(2).kind == Arg::Kind::IntList;
  auto dims = reduced_dims(has_dim ? c.arg(2) : Arg{}, x.type.rank());
  return {vector_norm(b, c, x, c.arg(1).is_none() ? nullptr : &operand(c, v, 1), dims)};
}
TORCH_TPU_LOWERING("norm.Scalar", norm_rule);
TORCH_TPU_LOWERING("norm.ScalarOpt_dim", norm_rule);
TORCH_TPU_LOWERING("norm.ScalarOpt_dtype", norm_rule);
TORCH_TPU_LOWERING("norm.ScalarOpt_dim_dtype", norm_rule);

}  // namespace
}  // namespace torch_tpu::ops
