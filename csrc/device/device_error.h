// How a failure the plugin reports reaches Python: running out of device
// memory is torch.OutOfMemoryError (what PyTorch code catches to retry with
// a smaller batch), with the size asked and the memory in use; anything else
// a RuntimeError naming what failed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hlo/tensor_type.h"
#include "pjrt/error.h"

namespace torch_tpu::device {

// Bytes of the dense buffers of `types`.
int64_t bytes_of(const std::vector<hlo::TensorType>& types);

// `action` like "running add.Tensor" or "copying f32[4] to tpu:0".
[[noreturn]] void raise_device_failure(const pjrt::Error& e, const std::string& action, int device_index,
                                       int64_t bytes_asked);

}  // namespace torch_tpu::device
