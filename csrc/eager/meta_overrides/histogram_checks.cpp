// torch.histogram / torch.histogramdd internals (histogram.bin_ct,
// histogram.bins_tensor, _histogramdd_bin_edges, _histogramdd_from_bin_cts,
// _histogramdd_from_bin_tensors) have no meta kernels: their result shapes,
// and the CPU's argument checks in its order (aten/src/ATen/native/Histogram.cpp),
// are here. Checks on the data (a non-finite inferred range) are the rule's.
#include "eager/meta_overrides/registry.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <optional>
#include <vector>

namespace torch_tpu::eager {
namespace {

at::Tensor meta_empty(const at::Tensor& like, std::vector<int64_t> sizes) {
  return at::empty(sizes, like.options().device(c10::kMeta));
}

std::optional<std::vector<double>> range_of(const c10::IValue& v) {
  if (v.isNone()) return std::nullopt;
  return v.toDoubleVector();
}

bool float_kernel(const at::Tensor& t) { return t.scalar_type() == c10::kFloat || t.scalar_type() == c10::kDouble; }

// select_outer_bin_edges: the range's length, the dtype dispatch when the
// range comes from the data, and a given range's finiteness and order.
void check_outer_edges(const at::Tensor& input, int64_t N, int64_t numel, const std::optional<std::vector<double>>& range) {
  // (bool edges: the CPU's linspace has no bool kernel)
  TORCH_CHECK_NOT_IMPLEMENTED(input.scalar_type() != c10::kBool, "\"linspace_cpu\" not implemented for 'Bool'");
  if (range) {
    TORCH_CHECK(static_cast<int64_t>(range->size()) == 2 * N, "torch.histogramdd: for a ", N,
                "-dimensional histogram range should have ", 2 * N, " elements, but got ", range->size());
    for (int64_t d = 0; d < N; ++d) {
      double lo = (*range)[2 * d], hi = (*range)[2 * d + 1];
      TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histogramdd: dimension ", d, "'s range [", lo, ", ",
                  hi, "] is not finite");
      TORCH_CHECK(lo <= hi, "torch.histogramdd: min should not exceed max, but got min ", lo, " max ", hi,
                  " for dimension ", d);
    }
  } else if (numel > 0) {
    TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(input.scalar_type()) && input.scalar_type() != c10::kBFloat16 &&
                                    input.scalar_type() != c10::kHalf,
                                "\"histogramdd\" not implemented for '", c10::toString(input.scalar_type()), "'");
  }
}

// histogramdd_check_inputs' weight part: weight shaped as the input without
// its last dim (a 0-d weight counts as [1]), of the input's dtype.
void check_weight(const at::Tensor& input, std::vector<int64_t> input_sizes, const at::Tensor* weight) {
  if (!weight) return;
  TORCH_CHECK(input.scalar_type() == weight->scalar_type(), "torch.histogramdd: if weight tensor is provided,",
              " input tensor and weight tensor should have the same dtype, but got input(", input.scalar_type(),
              "), and weight(", weight->scalar_type(), ")");
  std::vector<int64_t> ws = weight->sizes().vec();
  if (ws.empty()) ws = {1};
  TORCH_CHECK(input_sizes == ws, "torch.histogramdd: if weight tensor is provided it should have",
              " the same shape as the input tensor excluding its innermost dimension, but got input with shape ",
              input.sizes(), " and weight with shape ", weight->sizes());
}

void check_edges_tensor(const at::Tensor& input, const at::Tensor& e, int64_t d) {
  TORCH_CHECK(input.scalar_type() == e.scalar_type(), "torch.histogramdd: input tensor and bins tensors should",
              " have the same dtype, but got input with dtype ", input.scalar_type(), " and bins for dimension ", d,
              " with dtype ", e.scalar_type());
  TORCH_CHECK(e.dim() == 1, "torch.histogramdd: bins tensor should have one dimension,", " but got ", e.dim(),
              " dimensions in the bins tensor for dimension ", d);
  TORCH_CHECK(e.numel() > 0, "torch.histogramdd: bins tensor should have at least 1 element,", " but got ",
              e.numel(), " elements in the bins tensor for dimension ", d);
}

void check_bin_ct(int64_t ct, int64_t d) {
  TORCH_CHECK(ct > 0, "torch.histogram(): bins must be > 0, but got ", ct, " for dimension ", d);
}

// histogram.bin_ct(self, int bins, *, float[]? range, Tensor? weight, bool density)
std::vector<c10::IValue> histogram_bin_ct_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  int64_t bins = stack[first + 1].toInt();
  auto range = range_of(stack[first + 2]);
  const at::Tensor* weight = tensor_arg(stack, first + 3);
  check_bin_ct(bins, 0);
  check_outer_edges(self, 1, self.numel(), range);
  if (weight) {  // (the CPU reshapes weight to 1-d first)
    TORCH_CHECK(self.scalar_type() == weight->scalar_type(), "torch.histogramdd: if weight tensor is provided,",
                " input tensor and weight tensor should have the same dtype, but got input(", self.scalar_type(),
                "), and weight(", weight->scalar_type(), ")");
    TORCH_CHECK(weight->numel() == self.numel(), "torch.histogramdd: if weight tensor is provided it should have",
                " the same shape as the input tensor excluding its innermost dimension, but got input with shape [",
                self.numel(), ", 1] and weight with shape [", weight->numel(), "]");
  }
  return {meta_empty(self, {bins}), meta_empty(self, {bins + 1})};
}

// histogram.bins_tensor(self, Tensor bins, *, Tensor? weight, bool density)
std::vector<c10::IValue> histogram_bins_tensor_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  const at::Tensor& bins = stack[first + 1].toTensor();
  const at::Tensor* weight = tensor_arg(stack, first + 2);
  check_edges_tensor(self, bins, 0);
  if (weight) {
    TORCH_CHECK(self.scalar_type() == weight->scalar_type(), "torch.histogramdd: if weight tensor is provided,",
                " input tensor and weight tensor should have the same dtype, but got input(", self.scalar_type(),
                "), and weight(", weight->scalar_type(), ")");
    TORCH_CHECK(weight->numel() == self.numel(), "torch.histogramdd: if weight tensor is provided it should have",
                " the same shape as the input tensor excluding its innermost dimension, but got input with shape [",
                self.numel(), ", 1] and weight with shape [", weight->numel(), "]");
  }
  check_bin_ct(bins.numel() - 1, 0);
  return {meta_empty(self, {bins.numel() - 1}), meta_empty(bins, {bins.numel()})};
}

// The equal-width edges' sizes for histogramdd (bins per dimension), with
// the CPU's checks on the way (allocate_bin_edges_tensors, select_outer_bin_edges, linspace).
std::vector<int64_t> dd_edge_counts(const at::Tensor& self, const std::vector<int64_t>& bins,
                                    const std::optional<std::vector<double>>& range) {
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions");
  int64_t N = self.size(-1);
  check_outer_edges(self, N, self.numel(), range);
  TORCH_CHECK(static_cast<int64_t>(bins.size()) == N,
              "histogramdd: The size of bins must be equal to the innermost dimension of the input.");
  std::vector<int64_t> counts;
  for (int64_t d = 0; d < N; ++d) {
    TORCH_CHECK(bins[d] + 1 >= 0, "linspace(): number of steps must be non-negative");
    counts.push_back(bins[d] + 1);
  }
  return counts;
}

// _histogramdd_bin_edges(self, int[] bins, *, float[]? range, Tensor? weight, bool density) -> Tensor[]
std::vector<c10::IValue> histogramdd_bin_edges_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  std::vector<int64_t> counts = dd_edge_counts(self, stack[first + 1].toIntVector(), range_of(stack[first + 2]));
  std::vector<at::Tensor> edges;
  for (int64_t k : counts) edges.push_back(meta_empty(self, {k}));
  return {c10::IValue(edges)};
}

std::vector<int64_t> batch_sizes(const at::Tensor& self) {
  std::vector<int64_t> s = self.sizes().vec();
  s.pop_back();
  return s;
}

// _histogramdd_from_bin_cts(self, int[] bins, *, float[]? range, Tensor? weight, bool density) -> Tensor
std::vector<c10::IValue> histogramdd_from_bin_cts_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  std::vector<int64_t> counts = dd_edge_counts(self, stack[first + 1].toIntVector(), range_of(stack[first + 2]));
  std::vector<int64_t> hist;
  for (size_t d = 0; d < counts.size(); ++d)
    TORCH_CHECK(counts[d] > 0, "torch.histogramdd: bins tensor should have at least 1 element,", " but got ",
                counts[d], " elements in the bins tensor for dimension ", d);
  check_weight(self, batch_sizes(self), tensor_arg(stack, first + 3));
  for (size_t d = 0; d < counts.size(); ++d) {
    check_bin_ct(counts[d] - 1, d);
    hist.push_back(counts[d] - 1);
  }
  return {meta_empty(self, hist)};
}

// _histogramdd_from_bin_tensors(self, Tensor[] bins, *, Tensor? weight, bool density) -> Tensor
std::vector<c10::IValue> histogramdd_from_bin_tensors_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  std::vector<at::Tensor> bins = stack[first + 1].toTensorVector();
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions, but got ",
              self.dim());
  int64_t N = self.size(-1);
  TORCH_CHECK(static_cast<int64_t>(bins.size()) == N, "torch.histogramdd: expected ", N,
              " sequences of bin edges for a ", N, "-dimensional histogram but got ", bins.size());
  for (int64_t d = 0; d < N; ++d) check_edges_tensor(self, bins[d], d);
  check_weight(self, batch_sizes(self), tensor_arg(stack, first + 2));
  std::vector<int64_t> hist;
  for (int64_t d = 0; d < N; ++d) {
    check_bin_ct(bins[d].numel() - 1, d);
    hist.push_back(bins[d].numel() - 1);
  }
  return {meta_empty(self, hist)};
}

const MetaOverrideRegistrar registrar{
    {"aten::histogram.bin_ct", histogram_bin_ct_meta},
    {"aten::histogram.bins_tensor", histogram_bins_tensor_meta},
    {"aten::_histogramdd_bin_edges", histogramdd_bin_edges_meta},
    {"aten::_histogramdd_from_bin_cts", histogramdd_from_bin_cts_meta},
    {"aten::_histogramdd_from_bin_tensors", histogramdd_from_bin_tensors_meta},
};

}  // namespace
}  // namespace torch_tpu::eager
