// The agreement check (rank_agreement.h) costs one host round before every
// collective, which doubles the latency of a small all_reduce and costs a
// large one ~25%. So where the ranks can predict an all_reduce, its data and
// the check travel in one round: an all_reduce of the data with one slot per
// rank appended, in which each rank writes a digest of its own call (and the
// reduction's identity into the others' slots, so every slot arrives intact).
// When every slot holds the same digest, the ranks agree and, if their call
// is the predicted one, the all_reduce is already done.
//
// Every rank must enter the same round, also when the ranks disagree (a host
// collective given mismatched sizes gives wrong values or hangs). So the
// round is not chosen from this rank's own call but predicted from the
// sequence of collectives the ranks agreed on so far, which every rank knows
// alike: after a collective, the all_reduce that followed it the last two
// times. A loop of collectives (a training step, a decode loop, a benchmark)
// runs in one round per all_reduce from its third pass; a prediction that
// turns out wrong costs one round (its data is not used). With no prediction,
// or when the digests differ (then the full check names every rank's part, or
// passes for an uneven all_to_all), the check is the plain all-gather.
#pragma once
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <optional>
#include <unordered_map>
#include <vector>

#include "distributed/collective_transport.h"
#include "distributed/rank_agreement.h"

namespace torch_tpu::distributed {

class AgreedRounds {
 public:
  AgreedRounds(int rank, int size);
  // Checks `sig` across the ranks (raising on disagreement).
  void check(CollectiveTransport& transport, const OpSignature& sig);
  // Checks an all_reduce of `tensors` and, when it was the predicted one,
  // completes it: returns true with the result in `tensors`. Returns false
  // when the transport must still run it.
  bool check_and_allreduce(CollectiveTransport& transport, const OpSignature& sig,
                           std::vector<at::Tensor>& tensors, const c10d::ReduceOp& op);
  // All_reduces completed within their check so far.
  int64_t completed_in_check() const { return completed_; }

  // What a one-round all_reduce moves: the same on every rank that predicts it.
  struct Ride {
    c10::ScalarType dtype;
    int64_t numel;
    c10d::ReduceOp::RedOpType op;
    bool operator==(const Ride& o) const { return dtype == o.dtype && numel == o.numel && op == o.op; }
  };

 private:
  // `mine`: this rank's call as a ride, if it can be one.
  bool run(CollectiveTransport& transport, const OpSignature& sig, std::vector<at::Tensor>* tensors,
           const std::optional<Ride>& mine);
  // The predicted all_reduce with every rank's digest in its slot; sets
  // `agreed` when the digests are equal, returns true when `tensors` rode
  // (and now hold the result).
  bool one_round(CollectiveTransport& transport, const OpSignature& sig, const Ride& predicted,
                 std::vector<at::Tensor>* tensors, bool rides, bool& agreed);

  struct Next {
    std::optional<Ride> ride;  // the all_reduce that followed (none: another collective)
    int times = 0;             // how many times in a row
  };
  int rank_, size_;
  std::unordered_map<uint64_t, Next> next_;  // by the agreed digest of the collective before
  uint64_t last_ = 0;                        // the agreed digest of the last collective (0: none)
  int64_t completed_ = 0;
};

}  // namespace torch_tpu::distributed
