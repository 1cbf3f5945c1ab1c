// The sizes an out= op's meta kernel gave its written outputs, remembered per
// exact call signature. An out= call must learn those sizes before its program
// key is known (out may need resizing), so it ran PyTorch's meta kernel on every
// call; most out= meta kernels are Python (torch._meta_registrations): ~200 us
// a call (torch.add(x, y, out=o), the where.self_out of SDPA's _safe_softmax).
//
// The key is everything a meta kernel reads: the op, every argument's kind,
// each tensor's device, dtype, sizes and strides, and every number's value
// (bit for bit), plus the call's static key (global state such as the default
// dtype). A call with an equal key gets the same sizes and raises nothing the
// meta kernel would have raised, since that kernel saw equal inputs. Stored only
// when no written output was resized from a non-empty shape (the resize warns,
// as the CPU does on every call). An op whose meta override reads its tensors'
// values (linalg_lstsq.out's rank) is never remembered.
#pragma once
#include <ATen/core/stack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torch_tpu::eager {

using OutSizes = std::vector<std::vector<int64_t>>;  // one per written output, in return order

// Fills `key` with the call's signature; false when an argument has a kind
// the key does not cover (the call then always runs its meta kernel).
bool out_meta_key(const std::string& op, const std::string& static_key, const torch::jit::Stack& stack,
                  size_t first, size_t nargs, std::string& key);

// Counts a hit (out_meta_memo_hits in torch_tpu.metrics(), process-wide).
const OutSizes* find_out_meta(const std::string& key);
int64_t out_meta_memo_hits();
void remember_out_meta(const std::string& key, OutSizes sizes);

}  // namespace torch_tpu::eager
