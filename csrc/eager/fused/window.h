// Fused eager mode (TORCH_TPU_EAGER_MODE=fused, torch.tpu.EagerMode.DEFER_AND_FUSE):
// ops are recorded into a bounded window instead of running, and the window
// runs as one program, built by calling each op's own program (so XLA fuses
// across ops) and cached by the window's op sequence and wiring. Runtime
// values (offsets, Python scalars, random state) stay operands, so a loop
// that repeats the same ops reuses the program.
//
// The window runs (flushes) before anything sees a deferred storage's buffer
// (a host read, a write from outside, a fallback, a collective), at
// synchronization, event records, a mode change, an op on another device,
// an op that cannot be deferred (a compiled graph, a JAX kernel), and when it
// holds TORCH_TPU_FUSED_WINDOW_OPS ops (default 512).
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "eager/op_plan.h"

namespace torch_tpu::eager::fused {

// Defers one call whose plan is known (its text kept); returns its fresh outputs.
std::vector<at::Tensor> record(const Invocation& inv, std::shared_ptr<const OpPlan> plan,
                               const std::vector<TensorFacts>& facts,
                               const std::vector<device::StorageSlot*>& groups);

// Runs the pending window, if any.
void flush();

struct Counters {
  int64_t windows = 0;         // windows run
  int64_t ops = 0;             // ops deferred into them
  int64_t compiles = 0;        // window programs compiled (memory misses)
};
Counters counters();
void reset_counters();

}  // namespace torch_tpu::eager::fused
