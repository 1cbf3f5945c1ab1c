// index_copy(self, dim, index, source): self with the slices along `dim`
// named by `index` replaced by source's slices, one StableHLO scatter.
// Transformers' StaticCache writes each new key/value with index_copy_ at the
// cache position (a device tensor), so decoding never recompiles for it.
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"
#include "ops/torch_dtype_name.h"

namespace torch_tpu::ops {
namespace {

Values index_copy_rule(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value self = b.convert(operand(c, v, 0), out.dtype);
  Value index = operand(c, v, 2);
  // The CPU's checks, in its order: a long index, then one dtype for self and source.
  if (index.type.dtype != DType::I64)
    throw std::invalid_argument(std::string("index_copy_(): Expected a long tensor for index, but got ") +
                                torch_dtype_name(index.type.dtype));
  DType self_t = operand(c, v, 0).type.dtype, source_t = operand(c, v, 3).type.dtype;
  if (self_t != source_t)
    throw std::invalid_argument(std::string("index_copy_(): self and source expected to have the same dtype, but got "
                                            "(self) ") + torch_dtype_name(self_t) + " and (source) " +
                                torch_dtype_name(source_t));
  Value source = b.convert(operand(c, v, 3), out.dtype);
  int64_t rank = self.type.rank();
  if (rank == 0) {  // a 0-d self is one slice
    self = b.reshape(self, {1});
    source = b.reshape(source, {1});
  }
  int64_t r = self.type.rank();
  int64_t dim = wrap_dim(c.arg(1).i, r);
  int64_t size = self.type.dims[dim], n = index.type.numel();
  check_in_range(b, index, 0, size, CheckKind::Index,
                 "index_copy_(): index out of bounds for dimension " + std::to_string(dim) + " with size " +
                     std::to_string(size));
  if (n == 0 || self.type.numel() == 0) return {b.reshape(self, out.dims)};
  // Updates: source with `dim` moved first ([n, the other dims...]).
  std::vector<int64_t> perm{dim}, window;
  for (int64_t d = 0; d < r; ++d)
    if (d != dim) perm.push_back(d);
  for (int64_t d = 1; d < r; ++d) window.push_back(d);
  Value updates = b.transpose(b.reshape(source, [&] {
    std::vector<int64_t> dims = self.type.dims;
    dims[dim] = n;
    return dims;
  }()), perm);
  Value idx = b.reshape(b.convert(index, DType::I64), {n, 1});
  TensorType elem(out.dtype, {});
  hlo::RegionBody take = [](Builder&, const Values& a) { return Values{a[1]}; };
  Value result = b.emit("scatter", {self, idx, updates},
                        "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = " + hlo::int_list(window) +
                            ", inserted_window_dims = [" + std::to_string(dim) +
                            "], scatter_dims_to_operand_dims = [" + std::to_string(dim) +
                            "], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false",
                        {self.type}, {{{elem, elem}, take}})[0];
  return {b.reshape(result, out.dims)};
}

TORCH_TPU_ACCEPTS_COMPLEX("index_copy");
TORCH_TPU_LOWERING("index_copy", index_copy_rule);

}  // namespace
}  // namespace torch_tpu::ops
