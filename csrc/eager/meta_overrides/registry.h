// Output geometry for ops whose PyTorch meta kernels disagree with the CPU:
// they carry another backend's restrictions, raise another exception type
// than the CPU, or size or type a result otherwise. Each family's file checks
// what the CPU checks first, then (mostly) runs PyTorch's own meta kernel and
// adjusts its results; it registers its ops with a MetaOverrideRegistrar.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/core/operator_name.h>
#include <ATen/core/stack.h>
#include <c10/core/ScalarType.h>

#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

namespace torch_tpu::eager {

// Results as meta tensors, from the call's arguments stack[first...].
using MetaOverride = std::function<std::vector<c10::IValue>(const torch::jit::Stack& stack, size_t first)>;

const MetaOverride* find_meta_override(const c10::OperatorName& op);

// True for an override that reads the values of its tensors (from the device),
// so that its results are not a function of the call's metadata alone (the
// out= memo, eager/out_meta_memo.h, then never stands in for it).
bool meta_override_reads_values(const c10::OperatorName& op);

// Registers overrides by qualified name ("aten::mv", "aten::add.Tensor"); one
// static instance per file, before any op runs.
struct MetaOverrideRegistrar {
  MetaOverrideRegistrar(std::initializer_list<std::pair<const char*, MetaOverride>> overrides,
                        bool reads_values = false);
};

// PyTorch's meta kernel of `name`.`overload` on the call's arguments.
std::vector<c10::IValue> default_meta(const char* name, const char* overload, const torch::jit::Stack& stack,
                                      size_t first);

// stack[i] if it is a defined tensor, else nullptr (an optional argument left out).
const at::Tensor* tensor_arg(const torch::jit::Stack& stack, size_t i);

// The dtype a binary op of stack[first] and stack[first + 1] (tensors or scalars) computes in.
c10::ScalarType binary_result_type(const torch::jit::Stack& stack, size_t first);

// The CPU kernels that take one dtype for all their tensors: each defined
// tensor of stack[first + args[k]] must have the dtype of stack[first + ref],
// else a RuntimeError in the CPU's words, its TensorIterator's ("Found dtype
// Double but expected Float") or its accessors' ("expected scalar type Float
// but found Double"); the first in `args` order that differs is named.
enum class DtypeMessage { kTensorIterator, kAccessor };
void check_same_dtype(const torch::jit::Stack& stack, size_t first, size_t ref, const std::vector<size_t>& args,
                      DtypeMessage style);

// Result `i` of `r`, retyped to `dt` (same sizes) where the meta kernel typed it otherwise.
void retype_result(std::vector<c10::IValue>& r, size_t i, c10::ScalarType dt);

// `meta`, with its first result retyped to the dtype of argument `arg` where
// the dtype `meta` gives can be cast to it: the CPU ops whose result keeps
// one argument's dtype where the meta kernels promote.
MetaOverride retyped_as_arg(size_t arg, MetaOverride meta);

}  // namespace torch_tpu::eager
