// _grouped_mm: PyTorch's meta kernel insists on bfloat16 (a CUDA kernel
// limit), while the CPU, and this backend, take every float dtype.
#include "eager/meta_overrides/registry.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

std::vector<c10::IValue> grouped_mm_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& a = stack[first].toTensor();
  const at::Tensor& w = stack[first + 1].toTensor();
  bool has_offs = !stack[first + 2].isNone();
  auto out_dtype = stack[first + 4].isNone() ? a.scalar_type() : stack[first + 4].toScalarType();
  TORCH_CHECK(a.scalar_type() == w.scalar_type(), "_grouped_mm: expected mat_a and mat_b of one dtype, got ",
              a.scalar_type(), " and ", w.scalar_type());
  TORCH_CHECK(at::isFloatingType(a.scalar_type()), "_grouped_mm: expected floating point inputs, got ",
              a.scalar_type());
  TORCH_CHECK(out_dtype == a.scalar_type(), "Grouped gemm output dtype must match `mat_a` dtype");
  int64_t ra = a.dim(), rw = w.dim();
  TORCH_CHECK((ra == 2 || ra == 3) && (rw == 2 || rw == 3), "_grouped_mm: expected 2-d or 3-d inputs, got ", ra,
              "-d and ", rw, "-d");
  TORCH_CHECK(has_offs || (ra == 3 && rw == 3), "_grouped_mm: offs is required unless both inputs are 3-d");
  int64_t k_a = a.size(-1), k_w = w.size(-2);
  TORCH_CHECK(k_a == k_w, "_grouped_mm: contraction sizes differ: mat_a ", a.sizes(), ", mat_b ", w.sizes());
  std::vector<int64_t> sizes;
  if (ra == 3 && rw == 3) {
    TORCH_CHECK(a.size(0) == w.size(0), "_grouped_mm: batch sizes differ: ", a.sizes(), " and ", w.sizes());
    sizes = {a.size(0), a.size(1), w.size(2)};
  } else if (ra == 2 && rw == 3) {
    sizes = {a.size(0), w.size(2)};
  } else if (ra == 3 && rw == 2) {
    sizes = {a.size(1), w.size(1)};
  } else {
    sizes = {stack[first + 2].toTensor().size(0), a.size(0), w.size(1)};
  }
  return {at::empty(sizes, a.options().dtype(out_dtype).device(c10::kMeta))};
}

const MetaOverrideRegistrar registrar{{"aten::_grouped_mm", grouped_mm_meta}};

}  // namespace
}  // namespace torch_tpu::eager
