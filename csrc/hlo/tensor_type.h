// A ranked StableHLO tensor type: element type + static dimensions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlo/dtype.h"

namespace torch_tpu::hlo {

struct TensorType {
  DType dtype = DType::F32;
  std::vector<int64_t> dims;

  TensorType() = default;
  TensorType(DType d, std::vector<int64_t> s) : dtype(d), dims(std::move(s)) {}

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t numel() const;
  std::string str() const;  // "tensor<2x3xf32>", "tensor<f32>" for 0-d
  TensorType with_dtype(DType d) const { return TensorType(d, dims); }
  bool operator==(const TensorType& o) const { return dtype == o.dtype && dims == o.dims; }
  bool operator!=(const TensorType& o) const { return !(*this == o); }
};

// A value produced inside a function: its SSA name and type.
struct Value {
  std::string name;  // "%3", "%arg0"
  TensorType type;
};

}  // namespace torch_tpu::hlo
