#include "distributed/tpu_backend.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "distributed/completed_work.h"

namespace torch_tpu::distributed {

namespace {

using c10d::OpType;
using Match = OpSignature::Match;

std::string name_of(OpType op) { return "tpu_dist " + c10d::opTypeToString(op); }

// Dense tensors on tpu (or the CPU: object collectives and barriers use CPU
// tensors), all on one kind of device.
void check_tensors(OpType op, const std::vector<at::Tensor>& tensors) {
  c10::optional<c10::DeviceType> kind;
  for (const auto& t : tensors) {
    TORCH_CHECK(t.defined(), name_of(op), ": got an undefined tensor");
    TORCH_CHECK(t.layout() == c10::kStrided, name_of(op), ": expected dense tensors, got layout ", t.layout());
    TORCH_CHECK(t.device().is_privateuseone() || t.device().is_cpu(), name_of(op),
                ": expected tpu (or CPU) tensors, got a tensor on ", t.device());
    TORCH_CHECK(!kind || *kind == t.device().type(), name_of(op),
                ": all tensors must be on the same kind of device, got ", c10::DeviceTypeName(*kind), " and ",
                t.device());
    kind = t.device().type();
  }
}

void check_tensors(OpType op, const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<at::Tensor> flat;
  for (const auto& l : lists) flat.insert(flat.end(), l.begin(), l.end());
  check_tensors(op, flat);
}

void check_same_dtype(OpType op, const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), name_of(op), ": input and output dtypes differ (",
              a.scalar_type(), " and ", b.scalar_type(), ")");
}

int64_t reduce_op_of(const c10d::ReduceOp& op) { return static_cast<int64_t>(op.op_); }

// Elements each rank sends (or receives) in an all_to_all over `t` split
// along dim 0 by `splits` (equal parts when empty).
std::vector<int64_t> split_elems(OpType op, const at::Tensor& t, const std::vector<int64_t>& splits, int size,
                                 const char* which) {
  std::vector<int64_t> elems(size);
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const int64_t row_numel = rows == 0 ? 0 : t.numel() / rows;
  if (splits.empty()) {
    TORCH_CHECK(rows % size == 0, name_of(op), ": the ", which, " tensor's ", rows,
                " rows do not split evenly over ", size, " ranks; pass split sizes");
    for (auto& e : elems) e = rows / size * row_numel;
    return elems;
  }
  TORCH_CHECK(static_cast<int>(splits.size()) == size, name_of(op), ": expected ", size, " ", which,
              " split sizes, got ", splits.size());
  int64_t total = 0;
  for (int r = 0; r < size; ++r) {
    TORCH_CHECK(splits[r] >= 0, name_of(op), ": negative ", which, " split size ", splits[r]);
    total += splits[r];
    elems[r] = splits[r] * row_numel;
  }
  TORCH_CHECK(total == rows, name_of(op), ": the ", which, " split sizes add up to ", total, " but the ", which,
              " tensor has ", rows, " rows");
  return elems;
}

// TORCH_TPU_DIST_CHECK=0 skips the cross-rank check (one small host
// all-gather per collective); mismatched tensors then give undefined results.
bool agreement_checked() {
  static const bool on = [] {
    const char* v = std::getenv("TORCH_TPU_DIST_CHECK");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

c10::intrusive_ptr<c10d::Work> done(int rank, OpType op, std::vector<at::Tensor> outputs, int source = -1) {
  return c10::make_intrusive<CompletedWork>(rank, op, std::move(outputs), source);
}

std::vector<at::Tensor> flatten(const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<at::Tensor> flat;
  for (const auto& l : lists) flat.insert(flat.end(), l.begin(), l.end());
  return flat;
}

}  // namespace

TpuBackend::TpuBackend(int rank, int size, std::unique_ptr<CollectiveTransport> transport)
    : c10d::Backend(rank, size), transport_(std::move(transport)), rounds_(rank, size) {}

// A transport failure (a peer gone, a timeout, the host group refusing the
// call) reaches the user as a DistBackendError naming the collective.
void TpuBackend::guarded(c10d::OpType op, const std::function<void()>& run) {
  try {
    run();
  } catch (const c10::DistBackendError&) {
    throw;
  } catch (const c10::Error& e) {
    C10_THROW_ERROR(DistBackendError, name_of(op) + " failed in its transport (" + transport_->name() +
                                          "; a rank may have exited or stopped responding): " +
                                          e.what_without_backtrace());
  } catch (const std::exception& e) {
    C10_THROW_ERROR(DistBackendError, name_of(op) + " failed in its transport (" + transport_->name() +
                                          "; a rank may have exited or stopped responding): " + e.what());
  }
}

void TpuBackend::agree(const OpSignature& sig) {
  if (agreement_checked()) rounds_.check(*transport_, sig);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                     const c10d::BroadcastOptions& opts) {
  check_tensors(OpType::BROADCAST, tensors);
  guarded(OpType::BROADCAST, [&] {
    agree({OpType::BROADCAST, opts.rootRank, -1, tensors});
    transport_->broadcast(tensors, opts);
  });
  return done(getRank(), OpType::BROADCAST, tensors);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceOptions& opts) {
  check_tensors(OpType::ALLREDUCE, tensors);
  guarded(OpType::ALLREDUCE, [&] {
    OpSignature sig{OpType::ALLREDUCE, -1, reduce_op_of(opts.reduceOp), tensors};
    // A predicted one completes within the check (agreed_rounds.h).
    if (agreement_checked() && rounds_.check_and_allreduce(*transport_, sig, tensors, opts.reduceOp))
      return;
    transport_->allreduce(tensors, opts);
  });
  return done(getRank(), OpType::ALLREDUCE, tensors);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                               const c10d::AllreduceCoalescedOptions& opts) {
  check_tensors(OpType::ALLREDUCE_COALESCED, tensors);
  guarded(OpType::ALLREDUCE_COALESCED, [&] {
    agree({OpType::ALLREDUCE_COALESCED, -1, reduce_op_of(opts.reduceOp), tensors});
    transport_->allreduce_coalesced(tensors, opts);
  });
  return done(getRank(), OpType::ALLREDUCE_COALESCED, tensors);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  check_tensors(OpType::REDUCE, tensors);
  guarded(OpType::REDUCE, [&] {
    agree({OpType::REDUCE, opts.rootRank, reduce_op_of(opts.reduceOp), tensors});
    transport_->reduce(tensors, opts);
  });
  return done(getRank(), OpType::REDUCE, tensors);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) {
  const OpType op = OpType::ALLGATHER;
  check_tensors(op, inputs);
  check_tensors(op, outputs);
  TORCH_CHECK(outputs.size() == inputs.size(), name_of(op), ": expected one output list per input");
  for (size_t i = 0; i < inputs.size(); ++i) {
    TORCH_CHECK(static_cast<int>(outputs[i].size()) == getSize(), name_of(op), ": expected ", getSize(),
                " output tensors (one per rank), got ", outputs[i].size());
    for (const auto& o : outputs[i]) {
      check_same_dtype(op, inputs[i], o);
      TORCH_CHECK(o.sizes() == inputs[i].sizes(), name_of(op), ": output tensor of shape ", o.sizes(),
                  " for an input of shape ", inputs[i].sizes());
    }
  }
  guarded(op, [&] {
    agree({op, -1, -1, inputs});
    transport_->allgather(outputs, inputs, opts);
  });
  return done(getRank(), op, flatten(outputs));
}

c10::intrusive_ptr<c10d::Work> TpuBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                           const c10d::AllgatherOptions& opts) {
  const OpType op = OpType::_ALLGATHER_BASE;
  check_tensors(op, {output, input});
  check_same_dtype(op, input, output);
  TORCH_CHECK(output.numel() == input.numel() * getSize(), name_of(op), ": the output must hold ", getSize(),
              " inputs of ", input.numel(), " elements, got ", output.numel(), " elements");
  guarded(op, [&] {
    agree({op, -1, -1, {input}, Match::Numel});
    transport_->allgather_base(output, input, opts);
  });
  return done(getRank(), op, {output});
}

c10::intrusive_ptr<c10d::Work> TpuBackend::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                               std::vector<at::Tensor>& inputs,
                                                               const c10d::AllgatherOptions& opts) {
  const OpType op = OpType::ALLGATHER_COALESCED;
  check_tensors(op, inputs);
  check_tensors(op, outputs);
  guarded(op, [&] {
    agree({op, -1, -1, inputs});
    transport_->allgather_coalesced(outputs, inputs, opts);
  });
  return done(getRank(), op, flatten(outputs));
}

c10::intrusive_ptr<c10d::Work> TpuBackend::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                           std::vector<at::Tensor>& inputs,
                                                                           const c10d::AllgatherOptions& opts) {
  const OpType op = OpType::COALESCED;
  check_tensors(op, inputs);
  check_tensors(op, outputs);
  TORCH_CHECK(outputs.size() == inputs.size(), name_of(op), ": expected one output per input, got ",
              outputs.size(), " outputs for ", inputs.size(), " inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_same_dtype(op, inputs[i], outputs[i]);
    TORCH_CHECK(outputs[i].numel() == inputs[i].numel() * getSize(), name_of(op), ": output ", i, " must hold ",
                getSize(), " inputs of ", inputs[i].numel(), " elements, got ", outputs[i].numel());
  }
  guarded(op, [&] {
    agree({op, -1, -1, inputs, Match::Numel});
    transport_->allgather_into_tensor_coalesced(outputs, inputs, opts);
  });
  return done(getRank(), op, outputs);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                  std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  const OpType op = OpType::GATHER;
  check_tensors(op, inputs);
  check_tensors(op, outputs);
  guarded(op, [&] {
    agree({op, opts.rootRank, -1, inputs});
    transport_->gather(outputs, inputs, opts);
  });
  return done(getRank(), op, flatten(outputs));
}

c10::intrusive_ptr<c10d::Work> TpuBackend::scatter(std::vector<at::Tensor>& outputs,
                                                   std::vector<std::vector<at::Tensor>>& inputs,
                                                   const c10d::ScatterOptions& opts) {
  const OpType op = OpType::SCATTER;
  check_tensors(op, outputs);
  check_tensors(op, inputs);
  guarded(op, [&] {
    agree({op, opts.rootRank, -1, outputs});
    transport_->scatter(outputs, inputs, opts);
  });
  return done(getRank(), op, outputs);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                          std::vector<std::vector<at::Tensor>>& inputs,
                                                          const c10d::ReduceScatterOptions& opts) {
  const OpType op = OpType::REDUCE_SCATTER;
  check_tensors(op, outputs);
  check_tensors(op, inputs);
  TORCH_CHECK(outputs.size() == inputs.size(), name_of(op), ": expected one input list per output");
  for (size_t i = 0; i < outputs.size(); ++i) {
    TORCH_CHECK(static_cast<int>(inputs[i].size()) == getSize(), name_of(op), ": expected ", getSize(),
                " input tensors (one per rank), got ", inputs[i].size());
    for (const auto& in : inputs[i]) {
      check_same_dtype(op, in, outputs[i]);
      TORCH_CHECK(in.sizes() == outputs[i].sizes(), name_of(op), ": input tensor of shape ", in.sizes(),
                  " for an output of shape ", outputs[i].sizes());
    }
  }
  guarded(op, [&] {
    agree({op, -1, reduce_op_of(opts.reduceOp), outputs});
    transport_->reduce_scatter(outputs, inputs, opts);
  });
  return done(getRank(), op, outputs);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                const c10d::ReduceScatterOptions& opts) {
  const OpType op = OpType::_REDUCE_SCATTER_BASE;
  check_tensors(op, {output, input});
  check_same_dtype(op, input, output);
  TORCH_CHECK(input.numel() == output.numel() * getSize(), name_of(op), ": the input must hold ", getSize(),
              " outputs of ", output.numel(), " elements, got ", input.numel(), " elements");
  guarded(op, [&] {
    agree({op, -1, reduce_op_of(opts.reduceOp), {output}, Match::Numel});
    transport_->reduce_scatter_base(output, input, opts);
  });
  return done(getRank(), op, {output});
}

c10::intrusive_ptr<c10d::Work> TpuBackend::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                           std::vector<at::Tensor>& inputs,
                                                                           const c10d::ReduceScatterOptions& opts) {
  const OpType op = OpType::COALESCED;
  check_tensors(op, outputs);
  check_tensors(op, inputs);
  TORCH_CHECK(outputs.size() == inputs.size(), name_of(op), ": expected one output per input");
  for (size_t i = 0; i < outputs.size(); ++i) {
    check_same_dtype(op, inputs[i], outputs[i]);
    TORCH_CHECK(inputs[i].numel() == outputs[i].numel() * getSize(), name_of(op), ": input ", i, " must hold ",
                getSize(), " outputs of ", outputs[i].numel(), " elements, got ", inputs[i].numel());
  }
  guarded(op, [&] {
    agree({op, -1, reduce_op_of(opts.reduceOp), outputs, Match::Numel});
    transport_->reduce_scatter_tensor_coalesced(outputs, inputs, opts);
  });
  return done(getRank(), op, outputs);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                         std::vector<int64_t>& output_splits,
                                                         std::vector<int64_t>& input_splits,
                                                         const c10d::AllToAllOptions& opts) {
  const OpType op = OpType::ALLTOALL_BASE;
  check_tensors(op, {output, input});
  check_same_dtype(op, input, output);
  OpSignature sig{op, -1, -1, {input}, Match::Pairwise};
  sig.send_elems = split_elems(op, input, input_splits, getSize(), "input");
  sig.recv_elems = split_elems(op, output, output_splits, getSize(), "output");
  guarded(op, [&] {
    agree(sig);
    transport_->alltoall_base(output, input, output_splits, input_splits, opts);
  });
  return done(getRank(), op, {output});
}

c10::intrusive_ptr<c10d::Work> TpuBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                    std::vector<at::Tensor>& inputs,
                                                    const c10d::AllToAllOptions& opts) {
  const OpType op = OpType::ALLTOALL;
  check_tensors(op, outputs);
  check_tensors(op, inputs);
  TORCH_CHECK(static_cast<int>(inputs.size()) == getSize() && static_cast<int>(outputs.size()) == getSize(),
              name_of(op), ": expected ", getSize(), " input and output tensors, got ", inputs.size(), " and ",
              outputs.size());
  OpSignature sig{op, -1, -1, inputs, Match::Pairwise};
  for (int r = 0; r < getSize(); ++r) {
    check_same_dtype(op, inputs[r], outputs[r]);
    sig.send_elems.push_back(inputs[r].numel());
    sig.recv_elems.push_back(outputs[r].numel());
  }
  guarded(op, [&] {
    agree(sig);
    transport_->alltoall(outputs, inputs, opts);
  });
  return done(getRank(), op, outputs);
}

// Point-to-point messages have no collective to check against; the host
// group refuses a message larger than the receiver's buffer.
c10::intrusive_ptr<c10d::Work> TpuBackend::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  check_tensors(OpType::SEND, tensors);
  guarded(OpType::SEND, [&] { transport_->send(tensors, dst, tag); });
  return done(getRank(), OpType::SEND, tensors);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  check_tensors(OpType::RECV, tensors);
  guarded(OpType::RECV, [&] { transport_->recv(tensors, src, tag); });
  return done(getRank(), OpType::RECV, tensors, src);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  check_tensors(OpType::RECVANYSOURCE, tensors);
  int source = -1;
  guarded(OpType::RECVANYSOURCE, [&] { source = transport_->recv_anysource(tensors, tag); });
  return done(getRank(), OpType::RECVANYSOURCE, tensors, source);
}

c10::intrusive_ptr<c10d::Work> TpuBackend::barrier(const c10d::BarrierOptions& opts) {
  guarded(OpType::BARRIER, [&] {
    agree({OpType::BARRIER});
    transport_->barrier(opts);
  });
  return done(getRank(), OpType::BARRIER, {});
}

}  // namespace torch_tpu::distributed
