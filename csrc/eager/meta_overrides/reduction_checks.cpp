// logsumexp(self, dim=[], keepdim=False): PyTorch's composite kernel (what
// the CPU and CUDA run) reduces every dim into a 0-d sum, then adds the max
// it kept as [1, ..., 1] in place, which raises; the meta kernel returns the
// [1, ..., 1] shape instead. Raise as the CPU does (an empty self skips that
// path there: a 0-d -inf). hash_tensor, segment_reduce and kthvalue: the
// CPU's checks.
#include "eager/meta_overrides/registry.h"

#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <vector>

namespace torch_tpu::eager {
namespace {

std::vector<c10::IValue> logsumexp_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  bool empty_dims = stack[first + 1].toIntList().empty(), keepdim = stack[first + 2].toBool();
  if (empty_dims && !keepdim && self.dim() > 0) {
    if (self.numel() == 0) return {at::empty({}, self.options().device(c10::kMeta))};
    std::vector<int64_t> ones(self.dim(), 1);
    TORCH_CHECK(false, "output with shape [] doesn't match the broadcast shape ", c10::IntArrayRef(ones));
  }
  return default_meta("aten::logsumexp", "", stack, first);
}

// hash_tensor(self, dim=[], keepdim, mode): an empty self needs a dim, and no
// reduced dim may be empty (xor has an identity, but the CPU refuses).
std::vector<c10::IValue> hash_tensor_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  auto dims = stack[first + 1].toIntList();
  if (self.numel() == 0) {
    TORCH_CHECK(!dims.empty(), "hash_tensor: Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.");
    for (int64_t d : dims) {
      int64_t w = c10::maybe_wrap_dim(d, self.dim());
      TORCH_CHECK_INDEX(self.size(w) != 0, "hash_tensor: Expected reduction dim ", w, " to have non-zero size.");
    }
  }
  return default_meta("aten::hash_tensor", "", stack, first);
}

// segment_reduce(data, reduce, *, lengths?, indices?, offsets?, axis, ...): the
// CPU's argument checks, which PyTorch's meta kernel (an IndexError on a
// mismatched axis) does not make first.
std::vector<c10::IValue> segment_reduce_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& data = stack[first].toTensor();
  const at::Tensor *lengths = tensor_arg(stack, first + 2), *offsets = tensor_arg(stack, first + 4);
  int64_t axis = c10::maybe_wrap_dim(stack[first + 5].toInt(), data.dim());
  TORCH_CHECK(!tensor_arg(stack, first + 3), "segment_reduce(): indices based reduction is not supported yet.");
  TORCH_CHECK(lengths || offsets, "segment_reduce(): Either lengths or offsets must be defined.");
  const at::Tensor& bounds = offsets ? *offsets : *lengths;
  TORCH_CHECK(data.dim() >= bounds.dim());
  TORCH_CHECK(axis == bounds.dim() - 1, "segment_reduce(): Expected axis to be the last dimension of ",
              offsets ? "offsets" : "lengths", " but got ", axis, ".");
  return default_meta("aten::segment_reduce", "", stack, first);
}

// kthvalue(self, k, dim=-1, keepdim): the CPU checks the reduced dim is not
// empty (IndexError) before k's range; PyTorch's meta kernel checks k only,
// so kthvalue over an empty dim raised the k-range RuntimeError.
MetaOverride kthvalue_meta(const char* overload) {
  return [overload](const torch::jit::Stack& stack, size_t first) {
    const at::Tensor& self = stack[first].toTensor();
    int64_t dim = c10::maybe_wrap_dim(stack[first + 2].toInt(), self.dim(), /*wrap_scalar=*/true);
    at::native::zero_numel_check_dims(self, dim, "kthvalue()");  // the CPU kernel's own check
    return default_meta("aten::kthvalue", overload, stack, first);
  };
}

const MetaOverrideRegistrar registrar{{"aten::logsumexp", logsumexp_meta},
                                      {"aten::kthvalue", kthvalue_meta("")},
                                      {"aten::kthvalue.values", kthvalue_meta("values")},
                                      {"aten::hash_tensor", hash_tensor_meta},
                                      {"aten::segment_reduce", segment_reduce_meta}};

}  // namespace
}  // namespace torch_tpu::eager
