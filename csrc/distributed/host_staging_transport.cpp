#include "distributed/host_staging_transport.h"

#include "distributed/host_staging.h"

namespace torch_tpu::distributed {

namespace {
// The host group's errors (a peer gone, a timeout) surface here, as
// exceptions from wait().
void finish(const c10::intrusive_ptr<c10d::Work>& work) { work->wait(); }

// Stages what `call` asks of the HostStaging, runs the host collective it
// returns to completion, then copies the results back to the device.
template <class Call>
void staged(Call&& call) {
  HostStaging s;
  finish(call(s));
  s.write_back();
}
}  // namespace

HostStagingTransport::HostStagingTransport(c10::intrusive_ptr<c10d::Backend> host_group)
    : host_(std::move(host_group)) {}

std::string HostStagingTransport::name() const { return "host staging over " + host_->getBackendName(); }

void HostStagingTransport::broadcast(TensorList& tensors, const c10d::BroadcastOptions& opts) {
  staged([&](HostStaging& s) {
    auto host = s.inouts(tensors);
    return host_->broadcast(host, opts);
  });
}

void HostStagingTransport::allreduce(TensorList& tensors, const c10d::AllreduceOptions& opts) {
  staged([&](HostStaging& s) {
    auto host = s.inouts(tensors);
    return host_->allreduce(host, opts);
  });
}

void HostStagingTransport::allreduce_coalesced(TensorList& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  staged([&](HostStaging& s) {
    auto host = s.inouts(tensors);
    return host_->allreduce_coalesced(host, opts);
  });
}

void HostStagingTransport::reduce(TensorList& tensors, const c10d::ReduceOptions& opts) {
  staged([&](HostStaging& s) {
    auto host = s.inouts(tensors);
    return host_->reduce(host, opts);
  });
}

void HostStagingTransport::allgather(TensorLists& outputs, TensorList& inputs, const c10d::AllgatherOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.inputs(inputs);
    auto out = s.outputs(outputs);
    return host_->allgather(out, in, opts);
  });
}

void HostStagingTransport::allgather_base(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.input(input);
    auto out = s.output(output);
    return host_->_allgather_base(out, in, opts);
  });
}

void HostStagingTransport::allgather_coalesced(TensorLists& outputs, TensorList& inputs,
                                               const c10d::AllgatherOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.inputs(inputs);
    auto out = s.outputs(outputs);
    return host_->allgather_coalesced(out, in, opts);
  });
}

void HostStagingTransport::allgather_into_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                                           const c10d::AllgatherOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.inputs(inputs);
    auto out = s.outputs(outputs);
    return host_->allgather_into_tensor_coalesced(out, in, opts);
  });
}

void HostStagingTransport::gather(TensorLists& outputs, TensorList& inputs, const c10d::GatherOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.inputs(inputs);
    auto out = s.outputs(outputs);
    return host_->gather(out, in, opts);
  });
}

void HostStagingTransport::scatter(TensorList& outputs, TensorLists& inputs, const c10d::ScatterOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.inputs(inputs);
    auto out = s.outputs(outputs);
    return host_->scatter(out, in, opts);
  });
}

void HostStagingTransport::reduce_scatter(TensorList& outputs, TensorLists& inputs,
                                          const c10d::ReduceScatterOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.inputs(inputs);
    auto out = s.outputs(outputs);
    return host_->reduce_scatter(out, in, opts);
  });
}

void HostStagingTransport::reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                               const c10d::ReduceScatterOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.input(input);
    auto out = s.output(output);
    return host_->_reduce_scatter_base(out, in, opts);
  });
}

void HostStagingTransport::reduce_scatter_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                                           const c10d::ReduceScatterOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.inputs(inputs);
    auto out = s.outputs(outputs);
    return host_->reduce_scatter_tensor_coalesced(out, in, opts);
  });
}

void HostStagingTransport::alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
                                         std::vector<int64_t>& input_splits, const c10d::AllToAllOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.input(input);
    auto out = s.output(output);
    return host_->alltoall_base(out, in, output_splits, input_splits, opts);
  });
}

void HostStagingTransport::alltoall(TensorList& outputs, TensorList& inputs, const c10d::AllToAllOptions& opts) {
  staged([&](HostStaging& s) {
    auto in = s.inputs(inputs);
    auto out = s.outputs(outputs);
    return host_->alltoall(out, in, opts);
  });
}

void HostStagingTransport::send(TensorList& tensors, int dst, int tag) {
  HostStaging s;
  auto in = s.inputs(tensors);
  finish(host_->send(in, dst, tag));
}

void HostStagingTransport::recv(TensorList& tensors, int src, int tag) {
  staged([&](HostStaging& s) {
    auto out = s.outputs(tensors);
    return host_->recv(out, src, tag);
  });
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

void HostStagingTransport::allreduce_host(at::Tensor& buffer, const c10d::ReduceOp& op) {
  std::vector<at::Tensor> tensors{buffer};
  c10d::AllreduceOptions opts;
  opts.reduceOp = op;
  finish(host_->allreduce(tensors, opts));
}

}  // namespace torch_tpu::distributed
