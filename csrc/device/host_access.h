// Direct host access to `tpu` storage on plugins whose device memory is the
// host's own (platform "cpu", the XLA CPU plugin): a tensor read without a
// device-to-host copy, and host memory installed as a storage's new buffer
// without a host-to-device copy. Collectives that run on the host
// (distributed/host_staging.h) use it to skip their staging copies.
//
// Buffers stay immutable (DESIGN.md §3; caches such as the host copies of
// index uploads rely on it): an alias is only ever read, and new contents
// always arrive as a new buffer.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <memory>

namespace torch_tpu::device {

// True when the device's memory is host memory and the plugin can pin it.
bool host_addressable();

// A CPU tensor over `t`'s device memory (same sizes, strides and offset),
// valid while it lives; undefined when that is not possible (not
// host-addressable, never-written storage, a buffer not laid out densely).
// Waits for the buffer's pending producer first. Read it; never write it.
at::Tensor host_alias(const at::Tensor& t);

// Host memory aligned for the plugin to alias, recycled: blocks come back
// when their last holder (a tensor, a buffer the plugin aliases) lets go.
std::shared_ptr<void> host_block(size_t bytes);

// Makes `block` (holding `t`'s new contents, densely) the buffer of `t`'s
// storage without copying it. Only when `t` is contiguous and covers its
// whole storage; returns false (nothing done) otherwise.
bool install_host_block(const at::Tensor& t, std::shared_ptr<void> block);

}  // namespace torch_tpu::device
