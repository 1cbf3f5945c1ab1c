// Host memory for tensor.pin_memory() / DataLoader(pin_memory=True) with tpu
// as the accelerator. PJRT copies from ordinary host memory (the CPU plugin's
// device memory is host memory, and TPU hosts stage transfers themselves), so
// "pinned" here is an ordinary CPU allocation that is remembered as pinned:
// is_pinned() answers truthfully for it and its views, and nothing else changes.
#pragma once
#include <c10/core/Allocator.h>

namespace torch_tpu::device {

c10::Allocator* pinned_host_allocator();
// True when `p` lies inside an allocation of pinned_host_allocator().
bool is_pinned_host_pointer(const void* p);

}  // namespace torch_tpu::device
