#include "hlo/tensor_type.h"

namespace torch_tpu::hlo {

int64_t TensorType::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string TensorType::str() const {
  std::string s = "tensor<";
  for (int64_t d : dims) s += std::to_string(d) + "x";
  s += dtype_name(dtype);
  s += ">";
  return s;
}

}  // namespace torch_tpu::hlo
