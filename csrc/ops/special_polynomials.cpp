// Orthogonal polynomials torch.special.*_polynomial_*(x, n): the CPU kernels
// truncate n to an integer and run a three-term recurrence n - 1 times (after
// special values at the interval ends and, for Chebyshev kinds with large n
// inside (-1, 1), a closed trigonometric form). Here the recurrence is one
// stablehlo.while over the largest count, each element stepping only while
// its own count lasts, in the compute dtype (f32 for half types).
#include <cmath>
#include <functional>

#include "ops/elementwise_common.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// Element context: x, n = trunc(n) (-1 where the CPU's int64 cast of NaN/inf
// gives INT64_MIN), and `odd` (n % 2 != 0).
struct P {
  Builder& b;
  Value x, n, odd;
  Value c(double v) const { return full_like(b, x, v); }
  Value add(const Value& a, const Value& o) const { return b.add(a, o); }
  Value sub(const Value& a, const Value& o) const { return b.subtract(a, o); }
  Value mul(const Value& a, const Value& o) const { return b.multiply(a, o); }
  Value div(const Value& a, const Value& o) const { return b.divide(a, o); }
  Value eq(const Value& a, double v) const { return b.compare(a, c(v), "EQ"); }
  Value ne(const Value& a, double v) const { return b.compare(a, c(v), "NE"); }
  Value gt(const Value& a, double v) const { return b.compare(a, c(v), "GT"); }
  Value lt(const Value& a, double v) const { return b.compare(a, c(v), "LT"); }
  Value sel(const Value& m, const Value& t, const Value& f) const { return b.select(m, t, f); }
  Value abs(const Value& a) const { return b.unary("abs", a); }
  // libm's acosf/cosf/sinf are all but correctly rounded; XLA's f32 versions
  // drift by ulps for large arguments, which the division near a zero of the
  // numerator magnifies. Evaluating in f64 and rounding once matches libm.
  Value wide(const char* op, const Value& a) const {
    return b.convert(b.unary(op, b.convert(a, widest_internal_type(a.type.dtype))), a.type.dtype);
  }
  Value acos(const Value& a) const { return wide("chlo.acos", a); }
  Value cos(const Value& a) const { return wide("cosine", a); }
  Value sin(const Value& a) const { return wide("sine", a); }
  // odd ? -v : v
  Value alt(const Value& v) const { return sel(odd, b.negate(v), v); }
  Value n1() const { return add(n, c(1)); }                 // n + 1
  Value n21() const { return add(add(n, n), c(1)); }        // n + n + 1
};

// One polynomial kind. `special` (mask, value) and `trig` (mask, value) are
// optional; the recurrence r = rec(x, p, q, k) starts from p = 1, q = q1 with
// k = k0, k0 + step, ... for n - 1 steps.
struct Kind {
  std::function<std::pair<Value, Value>(const P&)> special;
  std::function<std::pair<Value, Value>(const P&)> trig;
  std::function<Value(const P&)> q1;
  std::function<Value(const P&, const Value& p, const Value& q, const Value& k)> rec;
  double k0 = 2, step = 1;
  bool hermite_limit = false;  // the CPU gives NaN for n above 128 (f32) / 512 (f64)
};

Value evaluate(Builder& b, const Kind& kind, const Value& x, const Value& n_raw) {
  Value nt = trunc(b, n_raw);
  Value bad = logical_or(b, is_nan(b, nt), b.compare(b.unary("abs", nt), full_like(b, nt, 9.2e18), "GE"));
  Value n = b.select(bad, full_like(b, nt, -1), nt);
  Value odd = b.compare(b.binary("remainder", n, full_like(b, n, 2)), full_like(b, n, 0), "NE");
  P p{b, x, n, odd};

  Value skip = p.lt(n, 2);  // elements not using the recurrence
  std::pair<Value, Value> sp, tr;
  if (kind.special) skip = logical_or(b, skip, (sp = kind.special(p)).first);
  if (kind.trig) skip = logical_or(b, skip, (tr = kind.trig(p)).first);
  Value limit;
  if (kind.hermite_limit) {
    limit = p.gt(n, x.type.dtype == DType::F64 ? 512 : 128);
    skip = logical_or(b, skip, limit);
  }
  Value q1 = kind.q1(p);
  // Steps per element (0 where skipped); the loop runs to the largest.
  Value steps = b.select(skip, p.c(0), p.sub(n, p.c(1)));
  Value rec = q1;
  if (x.type.numel() > 0) {
    Value steps_i = b.convert(steps, DType::I64);
    std::vector<int64_t> all;
    for (int64_t d = 0; d < steps_i.type.rank(); ++d) all.push_back(d);
    Value total = b.reduce({steps_i}, {b.constant_int(DType::I64, 0)}, all,
                           [](Builder& r, const Values& a) { return Values{r.maximum(a[0], a[1])}; })[0];
    TensorType scalar_i{DType::I64, {}};
    std::vector<TensorType> types{scalar_i, scalar_i, x.type, x.type, x.type, x.type};
    Values init{b.constant_int(DType::I64, 0), total, p.c(1), q1, x, steps};
    Kind k = kind;
    Values out = b.emit(
        "stablehlo.while", init, "", types,
        {{types, [](Builder& r, const Values& a) { return Values{r.compare(a[0], a[1], "LT")}; }},
         {types, [k](Builder& r, const Values& a) {
            const Value &i = a[0], &pv = a[2], &qv = a[3], &xv = a[4], &st = a[5];
            Value i_f = r.broadcast_to(r.convert(i, xv.type.dtype), xv.type.dims);
            P q{r, xv, xv, xv};
            Value kv = r.add(full_like(r, xv, k.k0), r.multiply(i_f, full_like(r, xv, k.step)));
            Value nv = k.rec(q, pv, qv, kv);
            Value active = r.compare(i_f, st, "LT");
            Value one = r.add(i, r.constant_int(DType::I64, 1));
            return Values{one, a[1], r.select(active, qv, pv), r.select(active, nv, qv), xv, st};
          }}});
    rec = out[3];
  }
  Value r = rec;
  if (kind.hermite_limit) r = b.select(limit, p.c(NAN), r);
  r = b.select(p.eq(n, 1), q1, r);
  r = b.select(p.eq(n, 0), p.c(1), r);
  if (kind.trig) r = b.select(tr.first, tr.second, r);
  if (kind.special) r = b.select(sp.first, sp.second, r);
  return b.select(p.lt(n, 0), p.c(0), r);
}

// Chebyshev recurrence with argument y (x, or 2x - 1 for the shifted kinds).
Value cheb_rec(const P& p, const Value& y, const Value& pv, const Value& qv) {
  return p.sub(p.mul(p.add(y, y), qv), pv);
}
Value shift(const P& p) { return p.sub(p.add(p.x, p.x), p.c(1)); }  // x + x - 1

Kind chebyshev(char which, bool shifted, double trig_from) {
  Kind k;
  auto y_of = [shifted](const P& p) { return shifted ? shift(p) : p.x; };
  k.special = [which, shifted](const P& p) {
    // the interval ends: |x| == 1, or x == 1 / x == 0 for the shifted kinds
    Value at_end = shifted ? logical_or(p.b, p.eq(p.x, 1), p.eq(p.x, 0)) : p.eq(p.abs(p.x), 1);
    Value upper = shifted ? p.eq(p.x, 1) : p.gt(p.x, 0);
    Value v;
    switch (which) {
      case 't': v = p.sel(upper, p.c(1), p.alt(p.c(1))); break;
      case 'u': v = p.sel(upper, p.n1(), p.alt(p.n1())); break;
      case 'v': v = p.sel(upper, p.c(1), p.alt(p.n21())); break;
      default: v = p.sel(upper, p.n21(), p.alt(p.c(1))); break;
    }
    return std::make_pair(at_end, v);
  };
  k.trig = [which, shifted, trig_from, y_of](const P& p) {
    Value y = y_of(p);
    Value m = logical_and(p.b, p.gt(p.n, trig_from), p.lt(p.abs(y), 1));
    Value a = p.acos(y);
    Value v;
    switch (which) {
      case 't': v = p.cos(p.mul(p.n, a)); break;
      case 'u': {
        Value s = p.sin(a), na = p.mul(p.n1(), a);
        v = p.sel(p.ne(s, 0), p.div(p.sin(na), s), p.div(p.mul(p.n1(), p.cos(na)), y));
        break;
      }
      case 'v': {
        Value h = p.div(a, p.c(2)), na = p.mul(p.add(p.n, p.c(0.5)), a);
        v = p.sel(p.ne(p.sin(h), 1), p.div(p.cos(na), p.cos(h)), p.alt(p.n21()));
        break;
      }
      default: {
        Value h = p.div(a, p.c(2)), na = p.mul(p.add(p.n, p.c(0.5)), a);
        Value end = shifted ? p.alt(p.c(1)) : p.sel(p.gt(p.x, 0), p.n21(), p.alt(p.c(1)));
        v = p.sel(p.ne(p.cos(h), 1), p.div(p.sin(na), p.sin(h)), end);
        break;
      }
    }
    return std::make_pair(m, v);
  };
  k.q1 = [which, y_of](const P& p) {
    Value y = y_of(p);
    switch (which) {
      case 't': return y;
      case 'u': return p.add(y, y);
      case 'v': return p.sub(p.add(y, y), p.c(1));
      default: return p.add(p.add(y, y), p.c(1));
    }
  };
  k.rec = [y_of](const P& p, const Value& pv, const Value& qv, const Value&) { return cheb_rec(p, y_of(p), pv, qv); };
  return k;
}

Kind hermite_h() {
  Kind k;
  k.hermite_limit = true;
  k.k0 = 2, k.step = 2;
  k.q1 = [](const P& p) { return p.add(p.x, p.x); };
  k.rec = [](const P& p, const Value& pv, const Value& qv, const Value& kv) {
    return p.sub(p.mul(p.add(p.x, p.x), qv), p.mul(kv, pv));
  };
  return k;
}
Kind hermite_he() {
  Kind k;
  k.hermite_limit = true;
  k.k0 = 1;
  k.q1 = [](const P& p) { return p.x; };
  k.rec = [](const P& p, const Value& pv, const Value& qv, const Value& kv) {
    return p.sub(p.mul(p.x, qv), p.mul(kv, pv));
  };
  return k;
}
Kind laguerre() {
  Kind k;
  k.k0 = 1;
  k.special = [](const P& p) { return std::make_pair(p.eq(p.x, 0), p.c(1)); };
  k.q1 = [](const P& p) { return p.sub(p.c(1), p.x); };
  k.rec = [](const P& p, const Value& pv, const Value& qv, const Value& kv) {
    Value a = p.add(p.add(kv, kv), p.sub(p.c(1), p.x));
    return p.div(p.sub(p.mul(a, qv), p.mul(kv, pv)), p.add(kv, p.c(1)));
  };
  return k;
}
Kind legendre() {
  Kind k;
  k.k0 = 1;
  k.special = [](const P& p) {
    return std::make_pair(p.eq(p.abs(p.x), 1), p.sel(p.gt(p.x, 0), p.c(1), p.alt(p.c(1))));
  };
  k.q1 = [](const P& p) { return p.x; };
  k.rec = [](const P& p, const Value& pv, const Value& qv, const Value& kv) {
    Value a = p.mul(p.mul(p.add(p.add(kv, kv), p.c(1)), p.x), qv);
    return p.div(p.sub(a, p.mul(kv, pv)), p.add(kv, p.c(1)));
  };
  return k;
}

// The CPU kernels exist for f32/f64 only (ints/bool promote to f32).
void reject_half(const OpCall& c, const char* name) {
  DType t = c.outputs[0].dtype;
  if (t == DType::BF16 || t == DType::F16)
    throw NotImplemented(std::string("\"") + (name + 8) + "_cpu\" not implemented for '" + hlo::dtype_name(t) + "'");
}

Values lower(Builder& b, const OpCall& c, const Values& v, const Kind& kind, const char* name) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype)) throw std::invalid_argument("unsupported result dtype " + out.str());
  reject_half(c, name);
  DType ct = compute_type(out.dtype);
  Value x = lift(b, c, v, 0, out.dtype, ct, out.dims);
  Value n = lift(b, c, v, 1, out.dtype, ct, out.dims);
  return Values{b.convert(evaluate(b, kind, x, n), out.dtype)};
}

#define TORCH_TPU_POLY(name, kind)                                                                  \
  TORCH_TPU_LOWERING(name, [](Builder& b, const OpCall& c, const Values& v) { return lower(b, c, v, kind, name); }); \
  TORCH_TPU_LOWERING(name ".x_scalar", [](Builder& b, const OpCall& c, const Values& v) { return lower(b, c, v, kind, name); }); \
  TORCH_TPU_LOWERING(name ".n_scalar", [](Builder& b, const OpCall& c, const Values& v) { return lower(b, c, v, kind, name); })

TORCH_TPU_POLY("special_chebyshev_polynomial_t", chebyshev('t', false, 6));
TORCH_TPU_POLY("special_chebyshev_polynomial_u", chebyshev('u', false, 8));
TORCH_TPU_POLY("special_chebyshev_polynomial_v", chebyshev('v', false, 8));
TORCH_TPU_POLY("special_chebyshev_polynomial_w", chebyshev('w', false, 8));
TORCH_TPU_POLY("special_shifted_chebyshev_polynomial_t", chebyshev('t', true, 6));
TORCH_TPU_POLY("special_shifted_chebyshev_polynomial_u", chebyshev('u', true, 6));
TORCH_TPU_POLY("special_shifted_chebyshev_polynomial_v", chebyshev('v', true, 6));
TORCH_TPU_POLY("special_shifted_chebyshev_polynomial_w", chebyshev('w', true, 4));
TORCH_TPU_POLY("special_hermite_polynomial_h", hermite_h());
TORCH_TPU_POLY("special_hermite_polynomial_he", hermite_he());
TORCH_TPU_POLY("special_laguerre_polynomial_l", laguerre());
TORCH_TPU_POLY("special_legendre_polynomial_p", legendre());
#undef TORCH_TPU_POLY

}  // namespace
}  // namespace torch_tpu::ops
