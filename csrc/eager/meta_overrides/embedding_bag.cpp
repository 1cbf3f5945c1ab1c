// _embedding_bag and _embedding_bag_forward_only: PyTorch's meta kernel sizes
// the auxiliary outputs as CUDA does when given meta tensors; these are the
// CPU's sizes (EmbeddingBag.cpp): offset2bag [N], or [0] on the fast sum path
// (float/half/bfloat16 weight with unit column stride, per_sample_weights of
// unit stride, no padding_idx); bag_size [num_bags] (forward_only in sum
// mode: offsets' size); max_indices [num_bags, D] in max mode, else
// bag_size's size; all in the promoted index dtype of indices and offsets.
#include "eager/meta_overrides/registry.h"

#include <ATen/ops/empty.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

namespace torch_tpu::eager {
namespace {

std::vector<c10::IValue> embedding_bag_meta(bool forward_only, const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& weight = stack[first].toTensor();
  const at::Tensor& indices = stack[first + 1].toTensor();
  const at::Tensor& offsets = stack[first + 2].toTensor();
  TORCH_CHECK(indices.dim() == 1 || indices.dim() == 2, "input has to be a 1D or 2D Tensor, but got Tensor of dimension ",
              indices.dim());
  if (indices.dim() == 1)
    TORCH_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ", offsets.dim());
  std::vector<c10::IValue> r =
      default_meta(forward_only ? "aten::_embedding_bag_forward_only" : "aten::_embedding_bag", "", stack, first);
  int64_t mode = stack[first + 4].toInt();
  const at::Tensor* psw = tensor_arg(stack, first + 6);
  bool include_last_offset = stack[first + 7].toBool();
  int64_t padding_idx = stack[first + 8].toInt();
  if (psw)
    TORCH_CHECK(psw->scalar_type() == weight.scalar_type(),
                "Expected tensor for argument #1 'per_sample_weights' to have the same type as tensor for argument #1 "
                "'weight'; but type ",
                psw->scalar_type(), " does not equal ", weight.scalar_type(),
                " (while checking arguments for embedding_bag)");
  auto common = c10::promoteTypes(indices.scalar_type(), offsets.scalar_type());
  auto opts = offsets.options().dtype(common).device(c10::kMeta);
  int64_t num_bags = offsets.size(0) - (include_last_offset ? 1 : 0);
  auto dt = weight.scalar_type();
  bool fast = (dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16) && weight.dim() >= 2 &&
              weight.stride(1) == 1 && padding_idx < 0 && (!psw || psw->dim() != 1 || psw->stride(0) == 1);
  at::Tensor offset2bag = at::empty({(mode != 0 || !fast) ? indices.size(0) : 0}, opts);
  at::Tensor bag_size =
      forward_only && mode == 0 ? at::empty(offsets.sizes(), opts) : at::empty({std::max<int64_t>(num_bags, 0)}, opts);
  at::Tensor max_indices = mode == 2 ? at::empty({std::max<int64_t>(num_bags, 0), weight.size(1)}, opts)
                                     : at::empty(bag_size.sizes(), opts);
  return {r.at(0), offset2bag, bag_size, max_indices};
}

const MetaOverrideRegistrar registrar{
    {"aten::_embedding_bag",
     [](const torch::jit::Stack& s, size_t f) { return embedding_bag_meta(false, s, f); }},
    {"aten::_embedding_bag_forward_only",
     [](const torch::jit::Stack& s, size_t f) { return embedding_bag_meta(true, s, f); }},
};

}  // namespace
}  // namespace torch_tpu::eager
