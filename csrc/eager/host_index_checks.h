// Index checks the host can make at once. PyTorch's CPU raises IndexError for
// an out-of-range index before the call returns; an index whose values the
// host knows (a CPU tensor, or a Python list that PyTorch just uploaded) is
// checked here the same way, with the CPU's message. Indices computed on the
// device keep the asynchronous 0-d failure flags of ops/runtime_check.h.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>

#include <string>
#include <vector>

namespace torch_tpu::eager {

// Keeps the values of a small integer or bool host tensor just uploaded as
// the whole storage of the tpu tensor `dst` (x[[0, 5]] uploads its list this
// way), for as long as that storage holds the uploaded buffer.
void remember_uploaded_values(const at::Tensor& dst, const at::Tensor& host);

// The values of `index` on the host when known without a device read: a CPU
// tensor itself, or a tpu view of remembered upload. Undefined otherwise.
at::Tensor host_known_values(const at::Tensor& index);

// The CPU's checks of advanced indexing: the number of indices, their dtypes,
// mask shapes (and the uint8 mask deprecation warning), broadcasting, and the
// bounds of host-known indices. `indices` holds undefined tensors for None;
// `values` is index_put's source (undefined for reads).
void check_index_list(const at::Tensor& self, const std::vector<at::Tensor>& indices, const at::Tensor& values);

// check_index_list for a boxed call of index / index_put / _index_put_impl
// (no-op for other ops taking a Tensor?[] list).
void check_index_call(const std::string& op, const torch::jit::Stack& stack, size_t first);

}  // namespace torch_tpu::eager
