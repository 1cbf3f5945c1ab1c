// Output geometry for ops whose meta kernels carry another backend's
// restrictions or disagree with the CPU: PyTorch's _grouped_mm meta insists on
// bfloat16 (a CUDA kernel limit), while the CPU, and this backend, take every
// float dtype; others (batch_norm, group_norm, convolution, mv, addr,
// huber_loss, triangular/LU solves) raise other exception types than the CPU
// or type their results otherwise (see below).
#include "eager/meta_overrides.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/ScalarType.h>

#include <string>
#include <unordered_map>

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

// ---- Ops whose (mostly Python) meta kernels raise another exception type
// than the CPU, or size/type a result otherwise. Each checks what the CPU
// checks first, then runs PyTorch's own meta kernel and adjusts its results.

at::Tensor to_meta(const at::Tensor& t) {
  if (!t.defined() || t.device().type() == c10::kMeta) return t;
  if (t.device().type() == c10::DeviceType::PrivateUse1)
    return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
  if (t.dim() == 0 && t.device().is_cpu() && !t.unsafeGetTensorImpl()->is_wrapped_number())
    return at::empty_strided({}, {}, t.options().device(c10::kMeta));
  return t;
}

// PyTorch's meta kernel of `name`.`overload` on the call's arguments.
std::vector<c10::IValue> default_meta(const char* name, const char* overload, const torch::jit::Stack& stack,
                                      size_t first) {
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  size_t nargs = handle.schema().arguments().size();
  torch::jit::Stack meta;
  for (size_t i = 0; i < nargs; ++i) {
    const c10::IValue& v = stack[first + i];
    meta.push_back(v.isTensor() ? c10::IValue(to_meta(v.toTensor())) : v);
  }
  handle.callBoxed(meta);
  return meta;
}

const at::Tensor* tensor_arg(const torch::jit::Stack& stack, size_t i) {
  const c10::IValue& v = stack[i];
  return v.isTensor() && v.toTensor().defined() ? &v.toTensor() : nullptr;
}

// The batch_norm family: a 0-d input makes the CPU's kernel fail to size a
// vector (ValueError), a 1-d one fails on dim 1 (IndexError); in evaluation
// the CPU returns empty save_mean/save_invstd ([0]) where the meta kernel has [C].
MetaOverride batch_norm_meta(const char* name, const char* overload, int training_arg) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    const at::Tensor& input = stack[first].toTensor();
    TORCH_CHECK_VALUE(input.dim() > 0, name, ": expected an input with at least 2 dims, got a 0-d tensor");
    TORCH_CHECK_INDEX(input.dim() > 1, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    std::vector<c10::IValue> r = default_meta(name, overload, stack, first);
    bool training;
    if (training_arg >= 0) {
      training = stack[first + training_arg].toBool();
    } else if (training_arg == -2) {  // _batch_norm_no_update: batch statistics without running stats
      training = !tensor_arg(stack, first + 3) && !tensor_arg(stack, first + 4);
    } else {
      training = false;
    }
    if (!training) {
      for (size_t i : {size_t{1}, size_t{2}}) {
        const at::Tensor& t = r.at(i).toTensor();
        r[i] = at::empty({0}, t.options());
      }
    }
    return r;
  };
}

// native_group_norm(input, weight?, bias?, N, C, HxW, group, eps): the CPU
// checks the affine parameters (RuntimeError) before the meta kernel indexes them.
std::vector<c10::IValue> group_norm_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& input = stack[first].toTensor();
  int64_t C = stack[first + 4].toInt();
  for (size_t i : {size_t{1}, size_t{2}}) {
    const at::Tensor* p = tensor_arg(stack, first + i);
    TORCH_CHECK(!p || (p->dim() == 1 && p->numel() == C), "Expected ", i == 1 ? "weight" : "bias",
                " to be a vector of size equal to the number of channels in input, but got ",
                i == 1 ? "weight" : "bias", " of shape ", p ? p->sizes() : at::IntArrayRef{}, " and input of shape ",
                input.sizes());
  }
  return default_meta("aten::native_group_norm", "", stack, first);
}

// convolution / _convolution: the CPU wants a weight of at least 3 dims (RuntimeError).
MetaOverride convolution_meta(const char* name) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    TORCH_CHECK(stack[first + 1].toTensor().dim() >= 3, "weight should have at least three dimensions");
    return default_meta(name, "", stack, first);
  };
}

// mv(self, vec): the CPU reads self.size(0) first, an IndexError for a 0-d self.
std::vector<c10::IValue> mv_meta(const torch::jit::Stack& stack, size_t first) {
  TORCH_CHECK_INDEX(stack[first].toTensor().dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  return default_meta("aten::mv", "", stack, first);
}

// addr(self, vec1, vec2, beta, alpha): the CPU expands self to the result
// before promoting, so a 0-d self promotes like a dimensioned tensor.
std::vector<c10::IValue> addr_meta(const torch::jit::Stack& stack, size_t first) {
  std::vector<c10::IValue> r = default_meta("aten::addr", "", stack, first);
  auto dt = c10::promoteTypes(stack[first].toTensor().scalar_type(),
                              c10::promoteTypes(stack[first + 1].toTensor().scalar_type(),
                                                stack[first + 2].toTensor().scalar_type()));
  const at::Tensor& out = r.at(0).toTensor();
  if (out.scalar_type() != dt) r[0] = at::empty(out.sizes(), out.options().dtype(dt));
  return r;
}

// huber_loss(self, target, reduction, delta): the CPU's result has self's dtype.
std::vector<c10::IValue> huber_loss_meta(const torch::jit::Stack& stack, size_t first) {
  std::vector<c10::IValue> r = default_meta("aten::huber_loss", "", stack, first);
  auto dt = stack[first].toTensor().scalar_type();
  const at::Tensor& out = r.at(0).toTensor();
  if (out.scalar_type() != dt) r[0] = at::empty(out.sizes(), out.options().dtype(dt));
  return r;
}

// linalg_solve_triangular(A, B, ...) and linalg_lu_solve(LU, pivots, B, ...):
// the CPU's RuntimeErrors for operands under 2 dims (the meta kernels assert).
MetaOverride square_solve_meta(const char* name, const char* a_label, const char* b_label, size_t b_arg) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    TORCH_CHECK(stack[first].toTensor().dim() >= 2, a_label, ": The input tensor A must have at least 2 dimensions.");
    TORCH_CHECK(stack[first + b_arg].toTensor().dim() >= 2, b_label,
                ": The input tensor B must have at least 2 dimensions.");
    return default_meta(name, "", stack, first);
  };
}

}  // namespace

const MetaOverride* find_meta_override(const c10::OperatorName& op) {
  static const std::unordered_map<std::string, MetaOverride> overrides = [] {
    std::unordered_map<std::string, MetaOverride> m;
    m["aten::_grouped_mm"] = grouped_mm_meta;
    m["aten::_native_batch_norm_legit"] = batch_norm_meta("aten::_native_batch_norm_legit", "", 5);
    m["aten::_native_batch_norm_legit_functional"] =
        batch_norm_meta("aten::_native_batch_norm_legit_functional", "", 5);
    m["aten::_native_batch_norm_legit_no_training"] =
        batch_norm_meta("aten::_native_batch_norm_legit_no_training", "", -1);
    m["aten::_batch_norm_no_update"] = batch_norm_meta("aten::_batch_norm_no_update", "", -2);
    m["aten::_batch_norm_with_update"] = [](const torch::jit::Stack& stack, size_t first) {
      const at::Tensor& input = stack[first].toTensor();
      TORCH_CHECK_VALUE(input.dim() > 0, "aten::_batch_norm_with_update: expected an input with at least 2 dims, got a 0-d tensor");
      TORCH_CHECK_INDEX(input.dim() > 1, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
      return default_meta("aten::_batch_norm_with_update", "", stack, first);
    };
    m["aten::native_group_norm"] = group_norm_meta;
    m["aten::convolution"] = convolution_meta("aten::convolution");
    m["aten::_convolution"] = convolution_meta("aten::_convolution");
    m["aten::mv"] = mv_meta;
    m["aten::addr"] = addr_meta;
    m["aten::huber_loss"] = huber_loss_meta;
    m["aten::linalg_solve_triangular"] =
        square_solve_meta("aten::linalg_solve_triangular", "linalg.solve_triangular", "linalg.solve_triangular", 1);
    m["aten::linalg_lu_solve"] = square_solve_meta("aten::linalg_lu_solve", "torch.linalg.lu_solve", "linalg.lu_solve", 2);
    return m;
  }();
  if (!op.overload_name.empty()) return nullptr;
  auto it = overrides.find(op.name);
  return it == overrides.end() ? nullptr : &it->second;
}

}  // namespace torch_tpu::eager
