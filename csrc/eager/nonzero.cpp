// nonzero and boolean-mask indexing: the result's shape depends on values, so
// (like CUDA) the count is read to the host first; a second program, compiled
// per count, produces the indices. x[mask] becomes x[mask.nonzero().unbind(1)].
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/index.h>
#include <ATen/ops/nonzero.h>
#include <torch/library.h>

#include "eager/boxed_kernel.h"
#include "eager/dtype_map.h"
#include "eager/executor.h"
#include "eager/host_index_checks.h"

namespace torch_tpu::eager {
namespace {

at::Tensor tpu_nonzero(const at::Tensor& self) {
  int device = self.device().index();
  hlo::TensorType flat(hlo::DType::I64, {self.numel()});
  // 1) how many
  Invocation count;
  count.op = "nonzero";
  count.static_key = "count";
  count.inputs = {self};
  count.device_index = device;
  count.infer_fresh = [] { return std::vector<FreshOutput>{FreshOutput{c10::kLong, {}, {}}}; };
  count.lower = [flat](hlo::Builder& b, const std::vector<hlo::Value>& t, const std::vector<hlo::Value>&) {
    hlo::Value x = b.reshape(t[0], {flat.dims[0]});
    hlo::Value ones = b.convert(b.convert(x, hlo::DType::Pred), hlo::DType::I64);
    hlo::Value zero = b.constant_int(hlo::DType::I64, 0);
    return b.reduce({ones}, {zero}, {0}, [](hlo::Builder& r, const std::vector<hlo::Value>& a) {
      return std::vector<hlo::Value>{r.add(a[0], a[1])};
    });
  };
  int64_t n = execute(count).at(0).item<int64_t>();
  // 2) where: positions of the nonzero elements, in order, unravelled to coordinates
  int64_t rank = self.dim();
  std::vector<int64_t> sizes = self.sizes().vec();
  Invocation where;
  where.op = "nonzero";
  where.static_key = "where" + std::to_string(n);
  where.inputs = {self};
  where.device_index = device;
  where.infer_fresh = [n, rank] {
    return std::vector<FreshOutput>{FreshOutput{c10::kLong, {n, rank}, {rank, 1}}};
  };
  where.lower = [flat, n, rank, sizes](hlo::Builder& b, const std::vector<hlo::Value>& t,
                                       const std::vector<hlo::Value>&) {
    int64_t total = flat.dims[0];
    hlo::Value x = b.convert(b.reshape(t[0], {total}), hlo::DType::Pred);
    hlo::Value pos = b.iota(flat, 0);
    // Non-zero positions keep their index, the rest sort after them.
    hlo::Value keys = b.select(x, pos, b.splat_int(flat, total));
    hlo::TensorType s(hlo::DType::I64, {});
    hlo::Value sorted = b.emit("sort", {keys}, "dimension = 0 : i64, is_stable = true", {flat},
                               {{{s, s}, [](hlo::Builder& r, const std::vector<hlo::Value>& a) {
                                   return std::vector<hlo::Value>{r.compare(a[0], a[1], "LT")};
                                 }}})[0];
    hlo::Value first = b.slice(sorted, {0}, {n}, {1});
    std::vector<hlo::Value> coords;
    int64_t stride = 1;
    std::vector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= sizes[d];
    }
    hlo::TensorType col(hlo::DType::I64, {n});
    for (int64_t d = 0; d < rank; ++d) {
      hlo::Value c = b.divide(first, b.splat_int(col, strides[d]));
      if (d > 0) c = b.binary("remainder", c, b.splat_int(col, sizes[d]));
      coords.push_back(b.reshape(c, {n, 1}));
    }
    if (rank == 0) return std::vector<hlo::Value>{b.splat_int(hlo::TensorType(hlo::DType::I64, {n, 0}), 0)};
    return std::vector<hlo::Value>{b.concatenate(coords, 1)};
  };
  return execute(where).at(0);
}

// x[mask, ...]: boolean (or uint8) indices expand to the coordinates of their
// true elements, as PyTorch's own index kernels do; then the integer path runs.
at::Tensor index_with_masks(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  std::vector<at::Tensor> given;
  for (const std::optional<at::Tensor>& i : indices) given.push_back(i.value_or(at::Tensor()));
  check_index_list(self, given, at::Tensor());  // mask shapes, uint8 warning, as on the CPU
  c10::List<std::optional<at::Tensor>> expanded;
  bool any_mask = false;
  for (const std::optional<at::Tensor>& i : indices) {
    if (i && i->defined() && (i->scalar_type() == at::kBool || i->scalar_type() == at::kByte)) {
      any_mask = true;
      at::Tensor mask = i->device() == self.device() ? *i : i->to(self.device());
      at::Tensor coords = tpu_nonzero(mask);
      for (int64_t d = 0; d < mask.dim(); ++d) expanded.push_back(coords.select(1, d));
    } else {
      expanded.push_back(i);
    }
  }
  TORCH_INTERNAL_ASSERT(any_mask);
  return at::index(self, expanded);
}

}  // namespace

bool has_mask_index(const c10::List<std::optional<at::Tensor>>& indices) {
  for (const std::optional<at::Tensor>& i : indices)
    if (i && i->defined() && (i->scalar_type() == at::kBool || i->scalar_type() == at::kByte)) return true;
  return false;
}

at::Tensor index_by_masks(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  return index_with_masks(self, indices);
}

// masked_select(x, mask) is x[mask] after broadcasting the two (printing a
// tensor uses it, so it must not fall back).
at::Tensor tpu_masked_select(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  auto [s, m] = at::expand_outplace(self, mask.device() == self.device() ? mask : mask.to(self.device()));
  c10::List<std::optional<at::Tensor>> indices;
  bool scalar = s->dim() == 0;  // a 0-d mask selects from a 1-element view
  indices.push_back(scalar ? m->reshape({1}) : *m);
  return index_with_masks(scalar ? s->reshape({1}) : *s, indices);
}

// The out= form, with the CPU kernel's checks in its order: an out that is
// the input (masked_select(x, m, out=x)) is refused, as on the CPU; run on
// the CPU as a fallback it computed, the copy hiding the aliasing.
at::Tensor& tpu_masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "masked_select(): self and result must have the same scalar type");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, mask);
  at::Tensor selected = tpu_masked_select(self, mask);
  at::native::resize_output(out, selected.sizes());
  out.copy_(selected);
  return out;
}

// nonzero.out, with the CPU kernel's checks and layout: it writes the
// indices column-major, so `out` ends up [n, dims] with strides (1, n).
at::Tensor& tpu_nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong, "nonzero: Expected out tensor to have scalar type Long but got scalar type",
              out.scalar_type());
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::Tensor indices = tpu_nonzero(self);
  at::native::resize_output(out, indices.sizes());
  out.as_strided_(indices.sizes(), {1, indices.size(0)});
  out.copy_(indices);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nonzero", tpu_nonzero);
  m.impl("nonzero.out", tpu_nonzero_out);
  m.impl("masked_select", tpu_masked_select);
  m.impl("masked_select.out", tpu_masked_select_out);
}

}  // namespace torch_tpu::eager
