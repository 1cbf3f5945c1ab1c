// Small helpers shared by the linalg rule files (matrices are the last two dims).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlo/dtype.h"
#include "ops/lowering_helpers.h"

namespace torch_tpu::ops::linalg {

// f32 / f64 only: the CPU's LAPACK kernels take no half or integer types.
inline void require_float32_or_64(const OpCall& c, DType t) {
  if (t != DType::F32 && t != DType::F64)
    throw NotImplemented(c.op + ": not implemented for " + std::string(hlo::dtype_name(t)));
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

// stablehlo.triangular_solve: op(a) x = b (left) or x op(a) = b (right).
inline Value triangular_solve(Builder& b, const Value& a, const Value& rhs, bool left, bool lower,
                              bool unit, bool transpose) {
  std::string attr = std::string("left_side = ") + (left ? "true" : "false") +
                     ", lower = " + (lower ? "true" : "false") +
                     ", unit_diagonal = " + (unit ? "true" : "false") +
                     ", transpose_a = #stablehlo<transpose " + (transpose ? "TRANSPOSE" : "NO_TRANSPOSE") + ">";
  return b.emit1("triangular_solve", {a, rhs}, attr, rhs.type);
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
