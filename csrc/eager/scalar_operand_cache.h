// Device buffers of runtime scalar operands (alpha, storage offsets, fill
// values), kept by value: a training loop passes the same few values on every
// step, and an upload (PJRT_Client_BufferFromHostBuffer + its destruction)
// costs about as much as running a tiny program. Scalar operands are never
// donated or aliased, so one immutable buffer can serve every call.
#pragma once
#include <memory>

#include "eager/executor.h"
#include "pjrt/buffer.h"

namespace torch_tpu::eager {

// The buffer holding `s` on the device (uploaded on first use).
std::shared_ptr<pjrt::Buffer> cached_scalar_buffer(const RuntimeScalar& s, int device_index);

}  // namespace torch_tpu::eager
