#include "distributed/host_staging_transport.h"

#include "distributed/host_staging.h"

namespace torch_tpu::distributed {

namespace {
// The host group's errors (a peer gone, a timeout) surface here, as
// exceptions from wait().
void finish(const c10::intrusive_ptr<c10d::Work>& work) { work->wait(); }
}  // namespace

HostStagingTransport::HostStagingTransport(c10::intrusive_ptr<c10d::Backend> host_group)
    : host_(std::move(host_group)) {}

std::string HostStagingTransport::name() const { return "host staging over " + host_->getBackendName(); }

void HostStagingTransport::broadcast(TensorList& tensors, const c10d::BroadcastOptions& opts) {
  HostStaging s;
  auto host = s.inouts(tensors);
  finish(host_->broadcast(host, opts));
  s.write_back();
}

void HostStagingTransport::allreduce(TensorList& tensors, const c10d::AllreduceOptions& opts) {
  HostStaging s;
  auto host = s.inouts(tensors);
  finish(host_->allreduce(host, opts));
  s.write_back();
}

void HostStagingTransport::allreduce_coalesced(TensorList& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  HostStaging s;
  auto host = s.inouts(tensors);
  finish(host_->allreduce_coalesced(host, opts));
  s.write_back();
}

void HostStagingTransport::reduce(TensorList& tensors, const c10d::ReduceOptions& opts) {
  HostStaging s;
  auto host = s.inouts(tensors);
  finish(host_->reduce(host, opts));
  s.write_back();
}

void HostStagingTransport::allgather(TensorLists& outputs, TensorList& inputs, const c10d::AllgatherOptions& opts) {
  HostStaging s;
  auto in = s.inputs(inputs);
  auto out = s.outputs(outputs);
  finish(host_->allgather(out, in, opts));
  s.write_back();
}

void HostStagingTransport::allgather_base(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) {
  HostStaging s;
  auto in = s.input(input);
  auto out = s.output(output);
  finish(host_->_allgather_base(out, in, opts));
  s.write_back();
}

void HostStagingTransport::allgather_coalesced(TensorLists& outputs, TensorList& inputs,
                                               const c10d::AllgatherOptions& opts) {
  HostStaging s;
  auto in = s.inputs(inputs);
  auto out = s.outputs(outputs);
  finish(host_->allgather_coalesced(out, in, opts));
  s.write_back();
}

void HostStagingTransport::allgather_into_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                                           const c10d::AllgatherOptions& opts) {
  HostStaging s;
  auto in = s.inputs(inputs);
  auto out = s.outputs(outputs);
  finish(host_->allgather_into_tensor_coalesced(out, in, opts));
  s.write_back();
}

void HostStagingTransport::gather(TensorLists& outputs, TensorList& inputs, const c10d::GatherOptions& opts) {
  HostStaging s;
  auto in = s.inputs(inputs);
  auto out = s.outputs(outputs);
  finish(host_->gather(out, in, opts));
  s.write_back();
}

void HostStagingTransport::scatter(TensorList& outputs, TensorLists& inputs, const c10d::ScatterOptions& opts) {
  HostStaging s;
  auto in = s.inputs(inputs);
  auto out = s.outputs(outputs);
  finish(host_->scatter(out, in, opts));
  s.write_back();
}

void HostStagingTransport::reduce_scatter(TensorList& outputs, TensorLists& inputs,
                                          const c10d::ReduceScatterOptions& opts) {
  HostStaging s;
  auto in = s.inputs(inputs);
  auto out = s.outputs(outputs);
  finish(host_->reduce_scatter(out, in, opts));
  s.write_back();
}

void HostStagingTransport::reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                               const c10d::ReduceScatterOptions& opts) {
  HostStaging s;
  auto in = s.input(input);
  auto out = s.output(output);
  finish(host_->_reduce_scatter_base(out, in, opts));
  s.write_back();
}

void HostStagingTransport::reduce_scatter_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                                           const c10d::ReduceScatterOptions& opts) {
  HostStaging s;
  auto in = s.inputs(inputs);
  auto out = s.outputs(outputs);
  finish(host_->reduce_scatter_tensor_coalesced(out, in, opts));
  s.write_back();
}

void HostStagingTransport::alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
                                         std::vector<int64_t>& input_splits, const c10d::AllToAllOptions& opts) {
  HostStaging s;
  auto in = s.input(input);
  auto out = s.output(output);
  finish(host_->alltoall_base(out, in, output_splits, input_splits, opts));
  s.write_back();
}

void HostStagingTransport::alltoall(TensorList& outputs, TensorList& inputs, const c10d::AllToAllOptions& opts) {
  HostStaging s;
  auto in = s.inputs(inputs);
  auto out = s.outputs(outputs);
  finish(host_->alltoall(out, in, opts));
  s.write_back();
}

void HostStagingTransport::send(TensorList& tensors, int dst, int tag) {
  HostStaging s;
  auto in = s.inputs(tensors);
  finish(host_->send(in, dst, tag));
}

void HostStagingTransport::recv(TensorList& tensors, int src, int tag) {
  HostStaging s;
  auto out = s.outputs(tensors);
  finish(host_->recv(out, src, tag));
  s.write_back();
}

int HostStagingTransport::recv_anysource(TensorList& tensors, int tag) {
  HostStaging s;
  auto out = s.outputs(tensors);
  auto work = host_->recvAnysource(out, tag);
  finish(work);
  s.write_back();
  return work->sourceRank();
}

void HostStagingTransport::barrier(const c10d::BarrierOptions& opts) {
  c10d::BarrierOptions host_opts = opts;
  host_opts.device_ids.clear();  // they name tpu devices; the host group's barrier is on the CPU
  finish(host_->barrier(host_opts));
}

at::Tensor HostStagingTransport::allgather_host_int64(const at::Tensor& row) {
  at::Tensor in = row.contiguous();
  at::Tensor out = at::empty({host_->getSize() * in.numel()}, in.options());
  finish(host_->_allgather_base(out, in, c10d::AllgatherOptions()));
  return out.view({host_->getSize(), in.numel()});
}

}  // namespace torch_tpu::distributed
