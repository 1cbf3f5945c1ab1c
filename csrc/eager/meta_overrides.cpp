// Output geometry for ops whose meta kernels carry another backend's
// restrictions or disagree with the CPU: PyTorch's _grouped_mm meta insists on
// bfloat16 (a CUDA kernel limit), while the CPU, and this backend, take every
// float dtype; others (batch_norm, group_norm, convolution, mv, addr,
// huber_loss, triangular/LU solves) raise other exception types than the CPU
// or type their results otherwise (see below).
#include "eager/meta_overrides.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/ScalarType.h>

#include <stdexcept>
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

// The batch_norm family's parameters (weight, bias, running_mean,
// running_var at stack[first + 1..4]), checked as the CPU checks them: a
// float32 weight with a bfloat16/half input makes a "mixed" call whose
// parameters must all be float32; otherwise each must have the input's dtype.
// The CPU's kernel does not check sizes (it reads past a short weight); here
// each must hold one value per channel, as torch.batch_norm requires.
void check_batch_norm_params(const char* name, const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& input = stack[first].toTensor();
  static const char* labels[] = {"weight", "bias", "running_mean", "running_var"};
  const at::Tensor* params[4];
  for (size_t i = 0; i < 4; ++i) params[i] = tensor_arg(stack, first + 1 + i);
  auto in_dt = input.scalar_type();
  const at::Tensor* lead = nullptr;
  for (auto* p : params) if (p && !lead) lead = p;
  if (lead && lead->scalar_type() != in_dt) {
    bool mixed = (in_dt == c10::kBFloat16 || in_dt == c10::kHalf);
    for (auto* p : params) mixed = mixed && (!p || p->scalar_type() == c10::kFloat);
    TORCH_CHECK(mixed, "mixed dtype (CPU): expect parameter to have scalar type of Float");
  } else {
    for (auto* p : params)
      TORCH_CHECK(!p || p->scalar_type() == in_dt, "expected scalar type ", in_dt, " but found ", p->scalar_type());
  }
  int64_t channels = input.size(1);
  for (size_t i = 0; i < 4; ++i) {
    const at::Tensor* p = params[i];
    if (!p) continue;
    TORCH_CHECK(i < 2 || p->dim() == 1, name, ": expected ", labels[i], " to be 1-d, got shape ", p->sizes());
    TORCH_CHECK(p->numel() == channels, name, ": ", labels[i], " should contain ", channels, " elements not ",
                p->numel(), " (input shape ", input.sizes(), ")");
  }
}

// A 0-d input makes the CPU's kernel fail to size a vector: a C++
// std::length_error, which Python sees as a ValueError through torch.ops and a
// RuntimeError through torch.native_batch_norm; the same exception type here
// gives the same Python type on every path. A 1-d one fails on dim 1 (IndexError).
void check_batch_norm_input_rank(const char* name, const at::Tensor& input) {
  if (input.dim() == 0)
    throw std::length_error(std::string(name) + ": expected an input with at least 2 dims, got a 0-d tensor");
  TORCH_CHECK_INDEX(input.dim() > 1, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

// The batch_norm family, checked like the CPU (above); in evaluation the CPU returns empty save_mean/save_invstd ([0]) where the meta kernel has [C].
MetaOverride batch_norm_meta(const char* name, const char* overload, int training_arg) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    const at::Tensor& input = stack[first].toTensor();
    check_batch_norm_input_rank(name, input);
    check_batch_norm_params(name, stack, first);
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

// ---- Binary ops whose CPU kernels have no variant for the promoted dtype:
// the CPU raises NotImplementedError naming its kernel, PyTorch's meta
// kernels a RuntimeError (or a ValueError for sub's alpha) of their own.

c10::ScalarType binary_result_type(const torch::jit::Stack& stack, size_t first) {
  const c10::IValue& a = stack[first];
  const c10::IValue& b = stack[first + 1];
  if (a.isTensor() && b.isTensor()) return at::result_type(a.toTensor(), b.toTensor());
  if (a.isTensor()) return at::result_type(a.toTensor(), b.toScalar());
  return at::result_type(a.toScalar(), b.toTensor());
}

// `kernel` (the CPU kernel's name) is not implemented for bool or, unless
// `complex_ok`, complex results; otherwise PyTorch's own meta kernel.
MetaOverride cpu_kernel_dtypes_meta(const char* name, const char* overload, const char* kernel, bool complex_ok,
                                    int mode_arg = -1) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    bool floor = mode_arg < 0 || (!stack[first + mode_arg].isNone() &&
                                  stack[first + mode_arg].toStringRef() == "floor");
    if (floor) {
      c10::ScalarType dt = binary_result_type(stack, first);
      TORCH_CHECK_NOT_IMPLEMENTED(dt != c10::kBool && (complex_ok || !c10::isComplexType(dt)), "\"", kernel,
                                  "\" not implemented for '", c10::toString(dt), "'");
    }
    return default_meta(name, overload, stack, first);
  };
}

// alpha of add/sub/rsub, checked against the result dtype as the CPU's
// alpha_check does (PyTorch's meta kernels raise a ValueError or accept it).
void check_alpha(const torch::jit::Stack& stack, size_t first) {
  const c10::IValue& a = stack[first + 2];
  if (!a.isScalar() && !a.isBool() && !a.isInt() && !a.isDouble() && !a.isComplexDouble()) return;
  c10::Scalar alpha = a.toScalar();
  c10::ScalarType dt = binary_result_type(stack, first);
  TORCH_CHECK(!alpha.isBoolean() || dt == c10::kBool, "Boolean alpha only supported for Boolean results.");
  TORCH_CHECK(c10::isFloatingType(dt) || c10::isComplexType(dt) || alpha.isIntegral(true),
              "For integral input tensors, argument alpha must not be a floating point number.");
  TORCH_CHECK(c10::isComplexType(dt) || !alpha.isComplex(),
              "For non-complex input tensors, argument alpha must not be a complex number.");
}

MetaOverride add_meta(const char* name, const char* overload) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    check_alpha(stack, first);
    return default_meta(name, overload, stack, first);
  };
}

// sub(self, other, alpha): the CPU refuses bool operands before it looks at alpha.
MetaOverride sub_meta(const char* overload) {
  return [=](const torch::jit::Stack& stack, size_t first) {
    auto is_bool = [&](size_t i) {
      const c10::IValue& v = stack[first + i];
      return v.isTensor() ? v.toTensor().scalar_type() == c10::kBool : v.isBool();
    };
    TORCH_CHECK(!(is_bool(0) && is_bool(1)),
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead.");
    TORCH_CHECK(!is_bool(0) && !is_bool(1),
                "Subtraction, the `-` operator, with a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    check_alpha(stack, first);
    return default_meta("aten::sub", overload, stack, first);
  };
}

// pow(bool tensor, bool): the CPU keeps bool (result_type), the meta kernel says int64.
std::vector<c10::IValue> pow_tensor_scalar_meta(const torch::jit::Stack& stack, size_t first) {
  std::vector<c10::IValue> r = default_meta("aten::pow", "Tensor_Scalar", stack, first);
  auto dt = binary_result_type(stack, first);
  const at::Tensor& out = r.at(0).toTensor();
  if (out.scalar_type() != dt) r[0] = at::empty(out.sizes(), out.options().dtype(dt));
  return r;
}

// The fused GRU cell has no meta kernel (its only kernel is CUDA's); the
// workspace layout is the one of ops/rnn_cells.cpp: [B, 5H].
// The fused cells' gates (input and hidden, [B, G*H]) against the state [B, H].
void check_fused_cell_shapes(const char* name, int64_t gates_per_unit, const char* state,
                             const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& gates = stack[first].toTensor();
  const at::Tensor& hidden_gates = stack[first + 1].toTensor();
  const at::Tensor& h = stack[first + 2].toTensor();
  TORCH_CHECK(gates.dim() == 2 && h.dim() == 2 && gates.size(1) == gates_per_unit * h.size(1) &&
                  gates.size(0) == h.size(0) && hidden_gates.sizes() == gates.sizes(),
              name, ": expected input_gates and hidden_gates of shape [B, ", gates_per_unit, "H] and ", state,
              " of [B, H], got ", gates.sizes(), ", ", hidden_gates.sizes(), " and ", h.sizes());
}

std::vector<c10::IValue> gru_cell_meta(const torch::jit::Stack& stack, size_t first) {
  check_fused_cell_shapes("_thnn_fused_gru_cell", 3, "hx", stack, first);
  const at::Tensor& hx = stack[first + 2].toTensor();
  auto opts = hx.options().device(c10::kMeta);
  return {at::empty(hx.sizes(), opts), at::empty({hx.size(0), 5 * hx.size(1)}, opts)};
}

// The fused LSTM cell: PyTorch's meta kernel reads the biases' devices
// without checking they were given (nn.LSTM(bias=False) fails in it).
std::vector<c10::IValue> lstm_cell_meta(const torch::jit::Stack& stack, size_t first) {
  check_fused_cell_shapes("_thnn_fused_lstm_cell", 4, "cx", stack, first);
  const at::Tensor& gates = stack[first].toTensor();
  const at::Tensor& cx = stack[first + 2].toTensor();
  auto opts = gates.options().device(c10::kMeta);
  return {at::empty(cx.sizes(), opts), at::empty(cx.sizes(), opts), at::empty(gates.sizes(), opts)};
}

std::vector<c10::IValue> gru_cell_backward_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& grad = stack[first].toTensor();
  const at::Tensor& workspace = stack[first + 1].toTensor();
  TORCH_CHECK(grad.dim() == 2 && workspace.dim() == 2 && workspace.size(0) == grad.size(0) &&
                  workspace.size(1) == 5 * grad.size(1),
              "_thnn_fused_gru_cell_backward: expected grad_hy of shape [B, H] and workspace of [B, 5H], got ",
              grad.sizes(), " and ", workspace.sizes());
  bool has_bias = stack[first + 2].toBool();
  auto opts = grad.options().device(c10::kMeta);
  int64_t n = grad.size(0), h = grad.size(1);
  auto bias = [&] { return has_bias ? c10::IValue(at::empty({3 * h}, opts)) : c10::IValue(at::Tensor()); };
  return {at::empty({n, 3 * h}, opts), at::empty({n, 3 * h}, opts), at::empty({n, h}, opts), bias(), bias()};
}

// PyTorch's meta kernel for it checks nothing (and returns no tensors); the
// lowering slices the workspace [B, 4H] of the forward above.
std::vector<c10::IValue> lstm_cell_backward_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& cx = stack[first + 2].toTensor();
  const at::Tensor& cy = stack[first + 3].toTensor();
  const at::Tensor& workspace = stack[first + 4].toTensor();
  auto state_shaped = [&](const c10::IValue& t) {
    return t.isNone() || !t.toTensor().defined() || t.toTensor().sizes() == cx.sizes();
  };
  TORCH_CHECK(cx.dim() == 2 && workspace.dim() == 2 && workspace.size(0) == cx.size(0) &&
                  workspace.size(1) == 4 * cx.size(1) && cy.sizes() == cx.sizes() && state_shaped(stack[first]) &&
                  state_shaped(stack[first + 1]),
              "_thnn_fused_lstm_cell_backward_impl: expected cx, cy (and the grads given) of shape [B, H] and "
              "workspace of [B, 4H], got cx ", cx.sizes(), ", cy ", cy.sizes(), " and workspace ", workspace.sizes());
  auto opts = workspace.options().device(c10::kMeta);
  bool has_bias = stack[first + 5].toBool();
  return {at::empty(workspace.sizes(), opts), at::empty(cx.sizes(), opts),
          has_bias ? c10::IValue(at::empty({workspace.size(1)}, opts)) : c10::IValue(at::Tensor())};
}

}  // namespace

const MetaOverride* find_meta_override(const c10::OperatorName& op) {
  static const std::unordered_map<std::string, MetaOverride> overrides = [] {
    std::unordered_map<std::string, MetaOverride> m;
    m["aten::_grouped_mm"] = grouped_mm_meta;
    m["aten::native_batch_norm"] = batch_norm_meta("aten::native_batch_norm", "", 5);
    m["aten::_native_batch_norm_legit"] = batch_norm_meta("aten::_native_batch_norm_legit", "", 5);
    m["aten::_native_batch_norm_legit_functional"] =
        batch_norm_meta("aten::_native_batch_norm_legit_functional", "", 5);
    m["aten::_native_batch_norm_legit_no_training"] =
        batch_norm_meta("aten::_native_batch_norm_legit_no_training", "", -1);
    m["aten::_batch_norm_no_update"] = batch_norm_meta("aten::_batch_norm_no_update", "", -2);
    m["aten::_batch_norm_with_update"] = [](const torch::jit::Stack& stack, size_t first) {
      const at::Tensor& input = stack[first].toTensor();
      check_batch_norm_input_rank("aten::_batch_norm_with_update", input);
      check_batch_norm_params("aten::_batch_norm_with_update", stack, first);
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
    m["aten::div.Tensor_mode"] = cpu_kernel_dtypes_meta("aten::div", "Tensor_mode", "div_floor_cpu", false, 2);
    m["aten::div.Scalar_mode"] = cpu_kernel_dtypes_meta("aten::div", "Scalar_mode", "div_floor_cpu", false, 2);
    m["aten::floor_divide"] = cpu_kernel_dtypes_meta("aten::floor_divide", "", "div_floor_cpu", false);
    m["aten::floor_divide.Scalar"] = cpu_kernel_dtypes_meta("aten::floor_divide", "Scalar", "div_floor_cpu", false);
    m["aten::logaddexp"] = cpu_kernel_dtypes_meta("aten::logaddexp", "", "logaddexp_cpu", true);
    m["aten::logaddexp2"] = cpu_kernel_dtypes_meta("aten::logaddexp2", "", "logaddexp2_cpu", false);
    m["aten::add.Tensor"] = add_meta("aten::add", "Tensor");
    m["aten::add.Scalar"] = add_meta("aten::add", "Scalar");
    m["aten::rsub.Tensor"] = add_meta("aten::rsub", "Tensor");
    m["aten::rsub.Scalar"] = add_meta("aten::rsub", "Scalar");
    m["aten::sub.Tensor"] = sub_meta("Tensor");
    m["aten::sub.Scalar"] = sub_meta("Scalar");
    m["aten::pow.Tensor_Scalar"] = pow_tensor_scalar_meta;
    m["aten::_thnn_fused_lstm_cell"] = lstm_cell_meta;
    m["aten::_thnn_fused_gru_cell"] = gru_cell_meta;
    m["aten::_thnn_fused_gru_cell_backward"] = gru_cell_backward_meta;
    m["aten::_thnn_fused_lstm_cell_backward_impl"] = lstm_cell_backward_meta;
    return m;
  }();
  auto it = overrides.find(op.overload_name.empty() ? op.name : op.name + "." + op.overload_name);
  return it == overrides.end() ? nullptr : &it->second;
}

}  // namespace torch_tpu::eager
