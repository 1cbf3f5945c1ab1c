// How collectives move data between processes. The tpu backend checks the
// arguments (locally and across ranks) and hands the tensors to a transport;
// a transport only moves bytes and returns when the outputs hold the result.
//
// Today's transport stages through the host (host_staging_transport.h): the
// XLA CPU plugin has no cross-process collectives. A transport that emits
// StableHLO all_reduce/all_gather/... with replica groups, for plugins whose
// runtime spans processes (libtpu), implements this same interface; the
// backend and its users do not change.
#pragma once
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <string>
#include <vector>

namespace torch_tpu::distributed {

class CollectiveTransport {
 public:
  virtual ~CollectiveTransport() = default;
  virtual std::string name() const = 0;

  using TensorList = std::vector<at::Tensor>;
  using TensorLists = std::vector<std::vector<at::Tensor>>;

  virtual void broadcast(TensorList& tensors, const c10d::BroadcastOptions& opts) = 0;
  virtual void allreduce(TensorList& tensors, const c10d::AllreduceOptions& opts) = 0;
  virtual void allreduce_coalesced(TensorList& tensors, const c10d::AllreduceCoalescedOptions& opts) = 0;
  virtual void reduce(TensorList& tensors, const c10d::ReduceOptions& opts) = 0;
  virtual void allgather(TensorLists& outputs, TensorList& inputs, const c10d::AllgatherOptions& opts) = 0;
  virtual void allgather_base(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) = 0;
  virtual void allgather_coalesced(TensorLists& outputs, TensorList& inputs, const c10d::AllgatherOptions& opts) = 0;
  virtual void allgather_into_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                               const c10d::AllgatherOptions& opts) = 0;
  virtual void gather(TensorLists& outputs, TensorList& inputs, const c10d::GatherOptions& opts) = 0;
  virtual void scatter(TensorList& outputs, TensorLists& inputs, const c10d::ScatterOptions& opts) = 0;
  virtual void reduce_scatter(TensorList& outputs, TensorLists& inputs, const c10d::ReduceScatterOptions& opts) = 0;
  virtual void reduce_scatter_base(at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) = 0;
  virtual void reduce_scatter_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                               const c10d::ReduceScatterOptions& opts) = 0;
  virtual void alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
                             std::vector<int64_t>& input_splits, const c10d::AllToAllOptions& opts) = 0;
  virtual void alltoall(TensorList& outputs, TensorList& inputs, const c10d::AllToAllOptions& opts) = 0;
  virtual void send(TensorList& tensors, int dst, int tag) = 0;
  virtual void recv(TensorList& tensors, int src, int tag) = 0;
  // Returns the rank the message came from.
  virtual int recv_anysource(TensorList& tensors, int tag) = 0;
  virtual void barrier(const c10d::BarrierOptions& opts) = 0;

  // Gathers every rank's row of a small CPU int64 tensor into [ranks, n]:
  // the backend's agreement check runs on it before data moves.
  virtual at::Tensor allgather_host_int64(const at::Tensor& row) = 0;
  // All_reduces a dense CPU tensor in place: the backend's one-round check
  // of a predicted all_reduce (agreed_rounds.h) runs on it.
  virtual void allreduce_host(at::Tensor& buffer, const c10d::ReduceOp& op) = 0;
};

}  // namespace torch_tpu::distributed
