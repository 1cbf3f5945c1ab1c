// TORCH_TPU_TRACE_BUFFERS=1: one stderr line per program run, naming the op
// (or fused window) and the device addresses of its arguments and results.
// It is for buffer-reuse bugs: a plugin that read a freed buffer showed up as
// a result at an address an earlier program had read (docs/reliability.md).
// Off by default; then each run pays one test of a bool.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pjrt/buffer.h"

namespace torch_tpu::eager {

bool buffer_trace_on();

// The arguments' addresses, taken before the run (a donated argument is
// deleted by it); empty when tracing is off.
std::vector<const void*> traced_addresses(const std::vector<pjrt::Buffer*>& args);

// Writes the line: `torch_tpu trace: <what> args [a, ...] -> results [r, ...]`.
void trace_run(const std::string& what, const std::vector<const void*>& args,
               const std::vector<std::shared_ptr<pjrt::Buffer>>& results);

}  // namespace torch_tpu::eager
