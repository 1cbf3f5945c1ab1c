// The agreement check (rank_agreement.h) costs one host all-gather before
// every collective, which doubles the latency of a small all_reduce. So a
// small all_reduce rides on that all-gather: every rank's data goes out with
// its signature, and once the signatures agree each rank reduces the gathered
// data itself, in rank order (the same result on every rank) — one round
// instead of two.
//
// Every rank's check must gather the same number of words, also when the
// ranks disagree (else the check itself would fail to line up). So the room
// for data in a check is not this rank's own tensor size but the agreed size
// of the previous collective of this group when it was a small all_reduce
// (0 otherwise): every rank knows it alike. A loop of same-size all_reduces
// (losses, gradient norms) runs fused from its second call on.
#pragma once
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <vector>

#include "distributed/collective_transport.h"
#include "distributed/rank_agreement.h"

namespace torch_tpu::distributed {

class AgreedRounds {
 public:
  // Checks `sig` across the ranks (raising on disagreement).
  void check(CollectiveTransport& transport, int size, const OpSignature& sig);
  // Checks an all_reduce of `tensors` and, when its data fitted the room
  // every rank expected, completes it: returns true with the result in
  // `tensors`. Returns false when the transport must still run it.
  bool check_and_allreduce(CollectiveTransport& transport, int size, const OpSignature& sig,
                           std::vector<at::Tensor>& tensors, const c10d::ReduceOp& op);
  // All_reduces completed within their check so far.
  int64_t completed_in_check() const { return completed_; }

 private:
  at::Tensor gather(CollectiveTransport& transport, int size, const OpSignature& sig, const void* data,
                    size_t bytes);
  int64_t room_words_ = 0;  // data words of the next check: the same on every rank
  int64_t completed_ = 0;
};

}  // namespace torch_tpu::distributed
