// Reading and writing strided views of a storage buffer inside a program
// (DESIGN.md §3). Torch-free: a view is (dtype, sizes, strides, runtime offset)
// over a base buffer that holds the storage as one dense row-major array.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::ops {

struct ViewGeometry {
  hlo::DType dtype;              // element type the view reads the storage as
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements of `dtype`
};

// How a view maps onto its base; decided from static facts only, so it is
// part of the cache key and the offset can stay a runtime operand.
enum class ViewAccess {
  Whole,    // the view is its base (same dtype, dense, offset necessarily 0)
  Strided,  // reshape/slice/transpose/broadcast of a window at the offset
  Gather,   // irregular strides: element gather/scatter
};

ViewAccess classify_view(const hlo::TensorType& base, const ViewGeometry& view);

// The view's elements as a dense value of type (view.dtype, view.sizes).
// `offset` is a 0-d i64 value (ignored for Whole).
hlo::Value read_view(hlo::Builder& b, const hlo::Value& base, const ViewGeometry& view,
                     const hlo::Value& offset);

// The base with the view's elements replaced by `value` (type must be
// (view.dtype, view.sizes)). Along a broadcast (stride 0) dim the last
// element is written, as the CPU's loops leave it.
hlo::Value write_view(hlo::Builder& b, const hlo::Value& base, const ViewGeometry& view,
                      const hlo::Value& offset, const hlo::Value& value);

// Row-major strides of `sizes`.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes);

}  // namespace torch_tpu::ops
