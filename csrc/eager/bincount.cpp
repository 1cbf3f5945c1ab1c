// bincount(self, weights?, minlength): the result's length, max(self) + 1 (at
// least minlength), depends on values, so (like CUDA) self's min and max are
// read to the host first; a second program, compiled per length, scatter-adds
// ones (or the weights) into the bins. The CPU's checks come first, in its
// order; its result dtype is int64 without weights, float32 for float32
// weights, float64 for any other weights.
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>

#include "eager/dtype_map.h"
#include "eager/executor.h"

namespace torch_tpu::eager {
namespace {

at::Tensor tpu_bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights_arg, int64_t minlength) {
  TORCH_CHECK_NOT_IMPLEMENTED(c10::isIntegralType(self.scalar_type(), /*includeBool=*/false),
                              "\"bincount_cpu\" not implemented for '", c10::toString(self.scalar_type()), "'");
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  if (self.dim() == 1 && self.numel() == 0) {
    at::Tensor z = at::empty({minlength}, self.options().dtype(c10::kLong));
    return z.zero_();
  }
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  const at::Tensor* weights = weights_arg && weights_arg->defined() ? &*weights_arg : nullptr;
  at::Tensor w;
  if (weights) {
    TORCH_CHECK(weights->device() == self.device(), "Expected all tensors to be on the same device, but found ",
                weights->device(), " and ", self.device());
    w = *weights;
  }
  int device = self.device().index();
  int64_t n_in = self.numel();
  // 1) min and max of self
  Invocation range;
  range.op = "bincount";
  range.static_key = "range";
  range.inputs = {self};
  range.device_index = device;
  range.infer_fresh = [] { return std::vector<FreshOutput>{FreshOutput{c10::kLong, {2}, {1}}}; };
  range.lower = [](hlo::Builder& b, const std::vector<hlo::Value>& t, const std::vector<hlo::Value>&) {
    hlo::Value x = b.convert(t[0], hlo::DType::I64);
    auto fold = [&](const char* op, int64_t init) {
      return b.reshape(b.reduce({x}, {b.constant_int(hlo::DType::I64, init)}, {0},
                                [op](hlo::Builder& r, const std::vector<hlo::Value>& a) {
                                  return std::vector<hlo::Value>{r.binary(op, a[0], a[1])};
                                })[0],
                       {1});
    };
    return std::vector<hlo::Value>{
        b.concatenate({fold("minimum", INT64_MAX), fold("maximum", INT64_MIN)}, 0)};
  };
  at::Tensor mm = execute(range).at(0).cpu();
  TORCH_CHECK(mm[0].item<int64_t>() >= 0, "bincount only supports 1-d non-negative integral inputs.");
  TORCH_CHECK(!weights || (w.dim() == 1 && w.size(0) == n_in),
              "weights should be 1-d and have the same length as input");
  int64_t bins = std::max(mm[1].item<int64_t>() + 1, minlength);
  c10::ScalarType out_dtype = !weights ? c10::kLong : w.scalar_type() == c10::kFloat ? c10::kFloat : c10::kDouble;
  // 2) the bins
  Invocation count;
  count.op = "bincount";
  count.static_key = std::to_string(bins) + (weights ? "w" : "");
  count.inputs = weights ? std::vector<at::Tensor>{self, w} : std::vector<at::Tensor>{self};
  count.device_index = device;
  count.infer_fresh = [bins, out_dtype] { return std::vector<FreshOutput>{FreshOutput{out_dtype, {bins}, {1}}}; };
  hlo::DType acc = to_hlo(out_dtype, "bincount");
  bool weighted = weights != nullptr;
  count.lower = [bins, acc, weighted, n_in](hlo::Builder& b, const std::vector<hlo::Value>& t,
                                             const std::vector<hlo::Value>&) {
    hlo::Value idx = b.convert(t[0], hlo::DType::I64);
    hlo::Value add = weighted ? b.convert(t[1], acc) : b.splat_int(hlo::TensorType(acc, {n_in}), 1);
    hlo::Value zeros = b.splat_int(hlo::TensorType(acc, {bins}), 0);
    return std::vector<hlo::Value>{b.scatter_elements_1d(zeros, idx, add, "add")};
  };
  return execute(count).at(0);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("bincount", tpu_bincount); }

}  // namespace
}  // namespace torch_tpu::eager
