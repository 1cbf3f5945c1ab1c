// Matrix products (mm, bmm, dot, mv and the scaled-accumulate forms addmm,
// baddbmm, addbmm, addmv) as stablehlo.dot_general. matmul and linear are
// composite in PyTorch and reach these. Half types multiply in float32 and
// round once like the CPU's gemm; float32 asks for full precision so TPUs do
// not drop to one bf16 pass.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/lowering_error.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using Dims = std::vector<int64_t>;

bool contains(const Dims& ds, int64_t d) { return std::find(ds.begin(), ds.end(), d) != ds.end(); }

// dot_general in `acc`; the result dims are the batch dims, then lhs's free
// dims, then rhs's free dims (StableHLO's order).
Value dot_general(Builder& b, const OpCall& c, const Value& lhs, const Value& rhs, const Dims& lb,
                  const Dims& rb, const Dims& lc, const Dims& rc, DType acc) {
  if (acc == DType::Pred)
    not_implemented_for(c.op.substr(0, c.op.find('.')), lhs.type.dtype);  // NotImplementedError, as the CPU
  Value l = b.convert(lhs, acc), r = b.convert(rhs, acc);
  Dims dims;
  for (int64_t d : lb) dims.push_back(l.type.dims[d]);
  for (int64_t i = 0; i < l.type.rank(); ++i)
    if (!contains(lb, i) && !contains(lc, i)) dims.push_back(l.type.dims[i]);
  for (int64_t i = 0; i < r.type.rank(); ++i)
    if (!contains(rb, i) && !contains(rc, i)) dims.push_back(r.type.dims[i]);
  std::string attr = "dot_dimension_numbers = #stablehlo.dot<";
  std::string sep;
  auto field = [&](const char* name, const Dims& v) {
    if (v.empty()) return;
    attr += sep + name + " = " + hlo::int_list(v);
    sep = ", ";
  };
  field("lhs_batching_dimensions", lb);
  field("rhs_batching_dimensions", rb);
  field("lhs_contracting_dimensions", lc);
  field("rhs_contracting_dimensions", rc);
  attr += ">";
  // Operands converted from half types are exact in bf16, so the default
  // precision is already exact for them; only genuine f32/f64 needs HIGHEST.
  bool from_half = lhs.type.dtype != acc;
  if ((hlo::is_float(acc) || hlo::is_complex(acc)) && !from_half) attr += precision_config(c.matmul_precision, acc);
  return b.emit1("dot_general", {l, r}, attr, TensorType(acc, dims));
}

// beta * self + alpha * product, where beta == 0 ignores self (NaN included)
// and alpha == 0 ignores the product, like BLAS and the CPU kernels. beta and
// alpha are runtime scalars (args 3 and 4).
// beta * self + alpha * product, a zero factor skipping its term (BLAS: NaN
// or inf in a skipped operand does not leak). With nothing contracted (k = 0)
// the CPU adds no product at all, so alpha (even NaN) is not applied.
Value scale_add(Builder& b, const OpCall& c, const Values& v, const Value& product, bool empty_contraction) {
  const TensorType& t = product.type;
  Value self = to_type(b, operand(c, v, 0), t);
  auto term = [&](const Value& x, size_t arg) {
    Value s = b.broadcast_to(b.convert(operand(c, v, arg), t.dtype), t.dims);
    Value zero = b.splat_float(t, 0);
    return b.select(b.compare(s, zero, "EQ"), zero, b.multiply(x, s));
  };
  if (empty_contraction) return term(self, 3);
  return b.add(term(self, 3), term(product, 4));
}

bool has_zero(const std::vector<int64_t>& dims, std::initializer_list<size_t> which) {
  for (size_t d : which)
    if (dims.at(d) == 0) return true;
  return false;
}

// The CPU kernels (not the meta ones) reject mixed dtypes, e.g. mm(f32, f64).
void require_same_dtype(const OpCall& c, const std::vector<size_t>& args) {
  DType t = c.operands.at(c.arg(args[0]).operand()).dtype;
  for (size_t a : args) {
    DType u = c.operands.at(c.arg(a).operand()).dtype;
    if (u != t)
      throw std::invalid_argument(c.op + ": expected all tensors to have the same dtype, but got " +
                                  hlo::dtype_name(t) + " and " + hlo::dtype_name(u));
  }
}

DType acc_of(const OpCall& c) {
  require_same_dtype(c, c.args.size() > 2 ? std::vector<size_t>{0, 1, 2} : std::vector<size_t>{0, 1});
  return compute_type(c.outputs[0].dtype);
}

Value finish(Builder& b, const Value& r, const OpCall& c) {
  return b.reshape(b.convert(r, c.outputs[0].dtype), c.outputs[0].dims);
}

TORCH_TPU_ACCEPTS_COMPLEX("mm", "bmm", "dot", "vdot", "mv", "addmm", "baddbmm", "addbmm", "addmv", "addr");

TORCH_TPU_LOWERING("mm", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{finish(b, dot_general(b, c, operand(c, v, 0), operand(c, v, 1), {}, {}, {1}, {0}, acc_of(c)), c)};
});

TORCH_TPU_LOWERING("bmm", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{finish(b, dot_general(b, c, operand(c, v, 0), operand(c, v, 1), {0}, {0}, {2}, {1}, acc_of(c)), c)};
});

TORCH_TPU_LOWERING("dot", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{finish(b, dot_general(b, c, operand(c, v, 0), operand(c, v, 1), {}, {}, {0}, {0}, acc_of(c)), c)};
});

// vdot conjugates its first argument (the identity for real dtypes).
TORCH_TPU_LOWERING("vdot", [](Builder& b, const OpCall& c, const Values& v) {
  Value x = operand(c, v, 0);
  if (hlo::is_complex(x.type.dtype)) x = b.complex(b.real(x), b.negate(b.imag(x)));
  return Values{finish(b, dot_general(b, c, x, operand(c, v, 1), {}, {}, {0}, {0}, acc_of(c)), c)};
});

TORCH_TPU_LOWERING("mv", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{finish(b, dot_general(b, c, operand(c, v, 0), operand(c, v, 1), {}, {}, {1}, {0}, acc_of(c)), c)};
});

// addmm(self, mat1, mat2, *, beta, alpha)
TORCH_TPU_LOWERING("addmm", [](Builder& b, const OpCall& c, const Values& v) {
  Value p = dot_general(b, c, operand(c, v, 1), operand(c, v, 2), {}, {}, {1}, {0}, acc_of(c));
  return Values{finish(b, scale_add(b, c, v, p, has_zero(operand(c, v, 1).type.dims, {1})), c)};
});

// baddbmm(self, batch1, batch2, *, beta, alpha)
TORCH_TPU_LOWERING("baddbmm", [](Builder& b, const OpCall& c, const Values& v) {
  Value p = dot_general(b, c, operand(c, v, 1), operand(c, v, 2), {0}, {0}, {2}, {1}, acc_of(c));
  return Values{finish(b, scale_add(b, c, v, p, has_zero(operand(c, v, 1).type.dims, {2})), c)};
});

// addbmm(self, batch1, batch2, *, beta, alpha): the batch is summed too. The
// CPU runs one addmm_ per batch into the result (beta for the first, then 1),
// so floating types accumulate (and half types round) once per batch: the
// same here, unrolled, for up to kMaxUnrolledBatches batches (beyond, and for
// integers, which are exact, one product).
constexpr int64_t kMaxUnrolledBatches = 256;

// float/double with few products (batches x k): the CPU's small gemm adds every
// rank-1 term into the result in order, c += (a[:, l] * alpha) * b[l, :] (no
// fma), starting from beta * self; spelled out the same way (for small sizes,
// which the OpInfo samples are), so the rounding agrees bit for bit.
constexpr int64_t kMaxSequentialProducts = 64;
Value addbmm_sequential(Builder& b, const OpCall& c, const Values& v) {
  DType dt = c.outputs[0].dtype;
  Value b1 = operand(c, v, 1), b2 = operand(c, v, 2);
  int64_t B = b1.type.dims[0], n = b1.type.dims[1], k = b1.type.dims[2], m = b2.type.dims[2];
  TensorType t(dt, {n, m});
  Value zero = b.splat_float(t, 0);
  Value beta = b.broadcast_to(b.convert(operand(c, v, 3), dt), {n, m});
  Value alpha = b.broadcast_to(b.convert(operand(c, v, 4), dt), {n, m});
  Value base = b.select(b.compare(beta, zero, "EQ"), zero, b.multiply(to_type(b, operand(c, v, 0), t), beta));
  Value acc = base;
  for (int64_t i = 0; i < B; ++i)
    for (int64_t l = 0; l < k; ++l) {
      Value col = b.broadcast_in_dim(b.reshape(b.slice(b1, {i, 0, l}, {i + 1, n, l + 1}, {1, 1, 1}), {n}), {n, m}, {0});
      Value row = b.broadcast_in_dim(b.reshape(b.slice(b2, {i, l, 0}, {i + 1, l + 1, m}, {1, 1, 1}), {m}), {n, m}, {1});
      Value term = b.multiply(b.multiply(b.convert(col, dt), alpha), b.convert(row, dt));
      acc = b.add(acc, keep_rounded(b, term));  // rounded, as the CPU's loop does
    }
  return b.select(b.compare(alpha, zero, "EQ"), base, acc);
}
TORCH_TPU_LOWERING("addbmm", [](Builder& b, const OpCall& c, const Values& v) {
  DType dt = c.outputs[0].dtype, acc = acc_of(c);
  const Dims& d1 = operand(c, v, 1).type.dims;
  bool empty = has_zero(d1, {0, 2});
  if (empty || d1[0] > kMaxUnrolledBatches || !(hlo::is_float(dt) || hlo::is_complex(dt))) {
    Value p = dot_general(b, c, operand(c, v, 1), operand(c, v, 2), {}, {}, {0, 2}, {0, 1}, acc);
    return Values{finish(b, scale_add(b, c, v, p, empty), c)};
  }
  if ((dt == DType::F32 || dt == DType::F64) && d1[0] * d1[2] <= kMaxSequentialProducts)
    return Values{finish(b, addbmm_sequential(b, c, v), c)};
  Value p = dot_general(b, c, operand(c, v, 1), operand(c, v, 2), {0}, {0}, {2}, {1}, acc);  // [B, n, m]
  int64_t n = p.type.dims[1], m = p.type.dims[2];
  auto batch = [&](int64_t i) { return b.reshape(b.slice(p, {i, 0, 0}, {i + 1, n, m}, {1, 1, 1}), {n, m}); };
  auto rnd = [&](const Value& a) { return b.convert(b.convert(a, dt), acc); };
  Value res = rnd(scale_add(b, c, v, batch(0), false));
  Value alpha = b.broadcast_to(b.convert(operand(c, v, 4), acc), {n, m}), zero = b.splat_float(res.type, 0);
  for (int64_t i = 1; i < d1[0]; ++i)
    res = rnd(b.add(res, b.select(b.compare(alpha, zero, "EQ"), zero, b.multiply(batch(i), alpha))));
  return Values{finish(b, res, c)};
});

// addmv(self, mat, vec, *, beta, alpha)
TORCH_TPU_LOWERING("addmv", [](Builder& b, const OpCall& c, const Values& v) {
  Value p = dot_general(b, c, operand(c, v, 1), operand(c, v, 2), {}, {}, {1}, {0}, acc_of(c));
  return Values{finish(b, scale_add(b, c, v, p, has_zero(operand(c, v, 1).type.dims, {1})), c)};
});

// addr(self, vec1, vec2, *, beta, alpha): outer product, no contraction. Unlike
// the gemm kernels the CPU's addr promotes mixed dtypes (self expanded first,
// so a 0-d self counts like the vectors): no same-dtype check.
TORCH_TPU_LOWERING("addr", [](Builder& b, const OpCall& c, const Values& v) {
  DType dt = c.outputs[0].dtype, acc = compute_type(dt);  // bool works as is: StableHLO's add/multiply are or/and on i1
  const Dims& out = c.outputs[0].dims;
  Value x = b.broadcast_in_dim(b.convert(operand(c, v, 1), acc), out, {0});
  Value y = b.broadcast_in_dim(b.convert(operand(c, v, 2), acc), out, {1});
  if (acc == dt) return Values{finish(b, scale_add(b, c, v, b.multiply(x, y), false), c)};
  // Half types: the CPU's elementwise kernel evaluates beta*self + alpha*v1*v2
  // in the half type, each operation rounded (beta and alpha too).
  auto rnd = [&](const Value& a) { return b.convert(b.convert(a, dt), acc); };
  TensorType t(acc, out);
  auto scalar = [&](size_t arg) { return b.broadcast_to(rnd(b.convert(operand(c, v, arg), acc)), out); };
  Value beta = scalar(3), alpha = scalar(4), zero = b.splat_float(t, 0);
  Value prod = b.select(b.compare(alpha, zero, "EQ"), zero, rnd(b.multiply(rnd(b.multiply(alpha, x)), y)));
  Value self = rnd(b.multiply(beta, to_type(b, operand(c, v, 0), t)));
  return Values{finish(b, b.select(b.compare(beta, zero, "EQ"), prod, rnd(b.add(self, prod))), c)};
});

}  // namespace
}  // namespace torch_tpu::ops

namespace torch_tpu::ops {
namespace {

// A per-tensor (1 element) or per-row/column ([M, 1] / [1, N]) scale of an
// [M, N] product, in float32.
Value scale_over(Builder& b, const Value& s, const TensorType& t, int64_t axis) {
  Value f = b.convert(s, DType::F32);
  if (f.type.numel() == 1) return b.broadcast_in_dim(b.reshape(f, {}), t.dims, {});
  return b.broadcast_in_dim(b.reshape(f, {t.dims[axis]}), t.dims, {axis});
}

// _scaled_mm(self, mat2, scale_a, scale_b, bias?, scale_result?, out_dtype?, use_fast_accum):
// the float8 matmul: (self * scale_a) @ (mat2 * scale_b) (+ bias) in float32,
// times scale_result when given, cast to out_dtype (saturating for float8).
TORCH_TPU_LOWERING("_scaled_mm", [](Builder& b, const OpCall& c, const Values& v) {
  Value p = dot_general(b, c, operand(c, v, 0), operand(c, v, 1), {}, {}, {1}, {0}, DType::F32);
  p = b.multiply(b.multiply(p, scale_over(b, operand(c, v, 2), p.type, 0)), scale_over(b, operand(c, v, 3), p.type, 1));
  if (const Value* bias = optional_operand(c, v, 4))
    p = b.add(p, b.broadcast_in_dim(b.convert(*bias, DType::F32), p.type.dims, {1}));
  if (const Value* sr = optional_operand(c, v, 5)) p = b.multiply(p, scale_over(b, *sr, p.type, 0));
  return Values{finish(b, p, c)};
});

}  // namespace
}  // namespace torch_tpu::ops
