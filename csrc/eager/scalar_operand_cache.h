// Device buffers of runtime scalar operands (alpha, storage offsets, fill
// values), kept by value: a training loop passes the same few values on every
// step, and an upload (PJRT_Client_BufferFromHostBuffer + its destruction)
// costs about as much as running a tiny program. Scalar operands are never
// donated or aliased, so one immutable buffer can serve every call.
#pragma once
#include <memory>
#include <string>

#include "eager/executor.h"
#include "pjrt/buffer.h"

namespace torch_tpu::eager {

// The buffer holding `s` on the device (uploaded on first use).
std::shared_ptr<pjrt::Buffer> cached_scalar_buffer(const RuntimeScalar& s, int device_index);

// The 1-D buffer of these elements of `dtype` (a fused window's packed
// operands, fused/window_state.h): a loop's windows pass the same values
// each time, and a buffer uploaded earlier is ready, so the window's program
// can run at once on the calling thread instead of waiting on the upload.
std::shared_ptr<pjrt::Buffer> cached_array_buffer(std::string bytes, hlo::DType dtype, int device_index);

}  // namespace torch_tpu::eager
