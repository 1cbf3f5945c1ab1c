// The first transport: each collective copies its tpu tensors to the host,
// runs the same collective on an inner CPU process group (gloo, built on the
// same store), and copies the results into the tpu outputs.
#pragma once
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "distributed/collective_transport.h"

namespace torch_tpu::distributed {

class HostStagingTransport : public CollectiveTransport {
 public:
  explicit HostStagingTransport(c10::intrusive_ptr<c10d::Backend> host_group);
  std::string name() const override;

  void broadcast(TensorList& tensors, const c10d::BroadcastOptions& opts) override;
  void allreduce(TensorList& tensors, const c10d::AllreduceOptions& opts) override;
  void allreduce_coalesced(TensorList& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  void reduce(TensorList& tensors, const c10d::ReduceOptions& opts) override;
  void allgather(TensorLists& outputs, TensorList& inputs, const c10d::AllgatherOptions& opts) override;
  void allgather_base(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) override;
  void allgather_coalesced(TensorLists& outputs, TensorList& inputs, const c10d::AllgatherOptions& opts) override;
  void allgather_into_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                       const c10d::AllgatherOptions& opts) override;
  void gather(TensorLists& outputs, TensorList& inputs, const c10d::GatherOptions& opts) override;
  void scatter(TensorList& outputs, TensorLists& inputs, const c10d::ScatterOptions& opts) override;
  void reduce_scatter(TensorList& outputs, TensorLists& inputs, const c10d::ReduceScatterOptions& opts) override;
  void reduce_scatter_base(at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  void reduce_scatter_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                       const c10d::ReduceScatterOptions& opts) override;
  void alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
                     std::vector<int64_t>& input_splits, const c10d::AllToAllOptions& opts) override;
  void alltoall(TensorList& outputs, TensorList& inputs, const c10d::AllToAllOptions& opts) override;
  void send(TensorList& tensors, int dst, int tag) override;
  void recv(TensorList& tensors, int src, int tag) override;
  int recv_anysource(TensorList& tensors, int tag) override;
  void barrier(const c10d::BarrierOptions& opts) override;
  at::Tensor allgather_host_int64(const at::Tensor& row) override;
  void allreduce_host(at::Tensor& buffer, const c10d::ReduceOp& op) override;

 private:
  c10::intrusive_ptr<c10d::Backend> host_;
};

}  // namespace torch_tpu::distributed
