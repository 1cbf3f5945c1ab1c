// Small helpers shared by the linalg rule files (matrices are the last two dims).
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hlo/dtype.h"
#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops::linalg {

// f32 / f64 only: the CPU's LAPACK kernels take no half or integer types.
inline void require_float32_or_64(const OpCall& c, DType t) {
  if (t != DType::F32 && t != DType::F64)
    throw NotImplemented(c.op + ": not implemented for " + std::string(hlo::dtype_name(t)));
}
// The rules that also handle complex64 / complex128 (declared complex-safe).
inline void require_lapack_dtype(const OpCall& c, DType t) {
  if (!hlo::is_complex(t)) require_float32_or_64(c, t);
}

// _linalg_det and _linalg_slogdet also return the LU factors their backward
// reads, and the CPU factors A^T (not A) when a real A is contiguous (LAPACK
// wants column-major); the backward reads LU with that meaning. Whether to
// factor A^T for argument `arg`, from A's contiguity
// (OpCall::operand_contiguous); where that is unknown a real A is not lowered.
inline bool factors_transpose(const OpCall& c, size_t arg, DType t) {
  if (hlo::is_complex(t)) return false;
  size_t k = static_cast<size_t>(c.arg(arg).operand());
  if (k >= c.operand_contiguous.size() || c.operand_contiguous[k] < 0)
    throw NotLowered(c.op + ": a real A's LU layout depends on its strides, unknown here");
  return c.operand_contiguous[k] == 1;
}

// x @ y over the last two dims (equal batch dims), at full precision.
inline Value batched_matmul(Builder& b, const Value& x, const Value& y) {
  int64_t r = x.type.rank();
  std::vector<int64_t> batch, dims;
  for (int64_t i = 0; i < r - 2; ++i) batch.push_back(i), dims.push_back(x.type.dims[i]);
  dims.push_back(x.type.dims[r - 2]);
  dims.push_back(y.type.dims[r - 1]);
  std::string attr = "dot_dimension_numbers = #stablehlo.dot<";
  if (!batch.empty())
    attr += "lhs_batching_dimensions = " + hlo::int_list(batch) + ", rhs_batching_dimensions = " + hlo::int_list(batch) + ", ";
  attr += "lhs_contracting_dimensions = [" + std::to_string(r - 1) + "], rhs_contracting_dimensions = [" +
          std::to_string(r - 2) + "]>" + precision_config(MatmulPrecision::Highest, x.type.dtype);
  return b.emit1("dot_general", {x, y}, attr, TensorType(x.type.dtype, dims));
}

// The identity matrix (batched) of type `t`.
inline Value identity(Builder& b, const TensorType& t) {
  int64_t r = t.rank();
  TensorType it(DType::I64, t.dims);
  return b.select(b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "EQ"), b.splat_float(t, 1.0), b.splat_float(t, 0.0));
}

// Complex conjugate (the identity for real values).
inline Value conj(Builder& b, const Value& x) {
  if (!hlo::is_complex(x.type.dtype)) return x;
  return b.complex(b.real(x), b.negate(b.imag(x)));
}

// `x` with its last two dims swapped.
inline Value mT(Builder& b, const Value& x) {
  std::vector<int64_t> perm;
  int64_t r = x.type.rank();
  for (int64_t i = 0; i < r - 2; ++i) perm.push_back(i);
  perm.push_back(r - 1);
  perm.push_back(r - 2);
  return b.transpose(x, perm);
}

// `x` broadcast to batch dims `batch` (its own last two dims kept).
inline Value broadcast_batch(Builder& b, const Value& x, const std::vector<int64_t>& batch) {
  std::vector<int64_t> dims = batch;
  int64_t r = x.type.rank();
  dims.push_back(x.type.dims[r - 2]);
  dims.push_back(x.type.dims[r - 1]);
  return b.broadcast_to(x, dims);
}

inline std::vector<int64_t> batch_of(const TensorType& t) {
  return std::vector<int64_t>(t.dims.begin(), t.dims.end() - 2);
}

inline int64_t numel(const TensorType& t) {
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;
  return n;
}

// `x` with its last two dims swapped and conjugated (A^H; A^T for real A).
inline Value mH(Builder& b, const Value& x) { return conj(b, mT(b, x)); }

// op(a) in a triangular solve: a, a^T or a^H (the same as a^T for real a).
enum class OpA { None, Transpose, Adjoint };

// stablehlo.triangular_solve: op(a) x = b (left) or x op(a) = b (right).
inline Value triangular_solve(Builder& b, const Value& a, const Value& rhs, bool left, bool lower,
                              bool unit, OpA op_a) {
  const char* t = op_a == OpA::None ? "NO_TRANSPOSE" : op_a == OpA::Transpose ? "TRANSPOSE" : "ADJOINT";
  std::string attr = std::string("left_side = ") + (left ? "true" : "false") +
                     ", lower = " + (lower ? "true" : "false") +
                     ", unit_diagonal = " + (unit ? "true" : "false") +
                     ", transpose_a = #stablehlo<transpose " + t + ">";
  return b.emit1("triangular_solve", {a, rhs}, attr, rhs.type);
}

// The main diagonal (batch, n) of a square (batch, n, n) value.
inline Value diagonal(Builder& b, const Value& x) {
  int64_t r = x.type.rank();
  TensorType it(DType::I64, x.type.dims);
  Value on = b.compare(b.iota(it, r - 2), b.iota(it, r - 1), "EQ");
  return b.reduce({b.select(on, x, b.splat_float(x.type, 0.0))}, {b.constant_float(x.type.dtype, 0.0)}, {r - 2},
                  [](Builder& rb, const std::vector<Value>& a) { return std::vector<Value>{rb.add(a[0], a[1])}; })[0];
}

// stablehlo.cholesky (lower): only the lower triangle is defined, so zero the rest.
inline Value cholesky_lower(Builder& b, const Value& a) {
  Value l = b.emit1("cholesky", {a}, "lower = true", a.type);
  int64_t r = a.type.rank();
  TensorType it(DType::I64, a.type.dims);
  Value row = b.iota(it, r - 2), col = b.iota(it, r - 1);
  return b.select(b.compare(row, col, "GE"), l, b.splat_float(a.type, 0.0));
}

}  // namespace torch_tpu::ops::linalg

namespace torch_tpu::ops::linalg {

// Packed LU (LAPACK getrf layout), 1-based i32 pivots and i32 info of `a`,
// from the linalg_lu_factor_ex rule (linalg/lu.cpp), called through the registry
// so the factorization has one implementation.
struct PackedLU {
  Value lu, pivots, info;
};

inline PackedLU lu_factor_packed(Builder& b, const Value& a) {
  const LoweringRule* rule = find_lowering("linalg_lu_factor_ex");
  if (!rule) throw std::invalid_argument("linalg: the LU factorization rule is not registered");
  OpCall c;
  c.op = "linalg_lu_factor_ex";
  Arg t;
  t.kind = Arg::Kind::Tensor;
  t.operands = {0};
  Arg pivot, check;
  pivot.kind = check.kind = Arg::Kind::Bool;
  pivot.b = true;
  c.args = {t, pivot, check};
  c.operands = {a.type};
  std::vector<int64_t> batch = batch_of(a.type), pd = batch;
  int64_t r = a.type.rank();
  pd.push_back(std::min(a.type.dims[r - 2], a.type.dims[r - 1]));
  c.outputs = {a.type, TensorType(DType::I32, pd), TensorType(DType::I32, batch)};
  Values out = (*rule)(b, c, {a});
  return {out[0], out[1], out[2]};
}

}  // namespace torch_tpu::ops::linalg

namespace torch_tpu::ops::linalg {

// (eigenvectors, eigenvalues ascending) of the symmetric (or Hermitian: real
// eigenvalues) `a` (batch, n, n), n > 0,
// reading only its lower (or upper) triangle: the XLA custom call "Eigh", which
// XLA's EighExpander rewrites into a Jacobi eigensolver in plain HLO on every
// backend. Backend config: "lower,sort,max_iter,tol".
inline std::pair<Value, Value> eigh(Builder& b, const Value& a, bool lower) {
  std::vector<int64_t> wd = batch_of(a.type);
  wd.push_back(a.type.dims.back());
  // Jacobi sweeps stop once the off-diagonal norm is below tol times the
  // norm: 1e-6 suits float32; double precision needs its own (1e-6 left
  // float64 SVD reconstructions off by ~1e-6).
  bool wide = hlo::complex_component(a.type.dtype) == DType::F64;
  std::string attr = std::string("call_target_name = \"Eigh\", backend_config = \"") + (lower ? "1" : "0") +
                     (wide ? ",1,100,1e-14\"" : ",1,100,1e-6\"");
  Values out = b.emit("custom_call", {a}, attr, {a.type, TensorType(hlo::complex_component(a.type.dtype), wd)});
  return {out[0], out[1]};
}

}  // namespace torch_tpu::ops::linalg
