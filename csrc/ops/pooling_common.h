// Pieces shared by the pooling rules (pooling.cpp, pooling_adaptive.cpp):
// pooling arguments, reduce_window, the CPU's max selection over (value,
// index) pairs, and the scatter-add of gradients back to input positions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ops/lowering_helpers.h"

namespace torch_tpu::ops::pooling {

using Dims = std::vector<int64_t>;

// The `n` trailing (spatial) dims of `t`; the leading ones are planes.
Dims spatial_dims(const TensorType& t, size_t n);
int64_t planes(const TensorType& t, size_t n);

// int[n] argument `i`: one value is repeated, an empty list gives `fallback`.
Dims int_arg(const OpCall& c, size_t i, size_t n, const Dims& fallback);

// Throws std::invalid_argument unless `t` is a real floating type.
void require_float(const OpCall& c, DType t);

// The lowest value of `t` (-inf for floats), the max-pool padding value.
Value lowest(Builder& b, DType t);

// stablehlo.reduce_window over the trailing n dims of every input (window,
// strides and window dilations given for those dims; none elsewhere).
Values reduce_window(Builder& b, const Values& inputs, const Values& inits, const Dims& window, const Dims& strides,
                     const Dims& dilations, const hlo::RegionBody& body);

// Pads the trailing n dims of `x` by `lo` and `hi` (either may be negative).
Value pad_spatial(Builder& b, const Value& x, const Value& fill, const Dims& lo, const Dims& hi,
                  const Dims& interior = {});

// The CPU's max pooling choice between (value, index) pairs: the larger
// value, the smaller index among equal values, and NaN above everything with
// the larger index among NaNs (the CPU scans in order and lets every NaN
// replace the running maximum). Commutative and associative, so any
// reduction order gives the CPU's answer.
Values max_with_index(Builder& b, const Values& a);

// Flat index (row-major over the trailing n dims) of every element of `t`, as i64.
Value flat_positions(Builder& b, const TensorType& t, size_t n);

// grad_input of shape `input` from `grad` and the flat in-plane positions
// `pos` (same shape as grad, leading plane dims as in `input`): sums every
// grad element into its position, in float32 for half types.
Value scatter_add_planes(Builder& b, const Value& grad, const Value& pos, const TensorType& input, size_t n);

// An i64 iota over `dims` along `dim`.
Value iota64(Builder& b, const Dims& dims, int64_t dim);

}  // namespace torch_tpu::ops::pooling
