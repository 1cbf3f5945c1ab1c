// Host copies of a collective's tensors, and the copies back. A host
// collective needs dense CPU tensors; a CPU tensor that is already
// contiguous is used as it is. Where the device's memory is host memory
// (device/host_access.h) nothing is copied through the plugin: inputs are
// read in place, and results land in host blocks that become the tensors'
// new buffers (one memcpy for an in-place collective's starting values).
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <utility>
#include <vector>

namespace torch_tpu::distributed {

class HostStaging {
 public:
  // A host copy to read from.
  at::Tensor input(const at::Tensor& t);
  // A host copy that the collective overwrites and that goes back into `t`.
  at::Tensor inout(const at::Tensor& t);
  // A host buffer the collective fills (nothing downloaded) that goes back into `t`.
  at::Tensor output(const at::Tensor& t);
  // The same, flat, with `extra` scratch elements of t's dtype after t's
  // own: the first t.numel() go back into `t`.
  at::Tensor output_with_room(const at::Tensor& t, int64_t extra);

  std::vector<at::Tensor> inputs(const std::vector<at::Tensor>& ts);
  std::vector<at::Tensor> inouts(const std::vector<at::Tensor>& ts);
  std::vector<at::Tensor> outputs(const std::vector<at::Tensor>& ts);
  std::vector<std::vector<at::Tensor>> inputs(const std::vector<std::vector<at::Tensor>>& ts);
  std::vector<std::vector<at::Tensor>> outputs(const std::vector<std::vector<at::Tensor>>& ts);

  // Copies every host result into its tensor.
  void write_back();

 private:
  struct Back {
    at::Tensor dst;
    at::Tensor host;               // the result, dense
    std::shared_ptr<void> block;   // its memory, when it is a host block
  };
  // A flat host block for `t`'s result and `extra` elements after it (null
  // where the device is not host memory).
  at::Tensor block_for(const at::Tensor& t, int64_t extra);
  std::vector<Back> back_;
  std::vector<at::Tensor> held_;  // host copies of inputs, alive until the collective is done
};

}  // namespace torch_tpu::distributed
