// Before a collective moves data, the ranks compare what they are about to
// do: the op, its root and reduction, and their tensors' dtypes and shapes.
// A host collective given mismatched sizes does not fail on every rank (gloo
// gives some ranks wrong values and no error), so a disagreement raises the
// same clear error on every rank instead.
#pragma once
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <vector>

#include "distributed/collective_transport.h"

namespace torch_tpu::distributed {

struct OpSignature {
  enum class Match {
    Shapes,    // every rank's tensors have the same dtypes and shapes
    Numel,     // same dtypes and element counts (flat all_gather / reduce_scatter)
    Pairwise,  // all_to_all: what rank i sends rank j, rank j expects from rank i
  };
  c10d::OpType op;
  int64_t root = -1;
  int64_t reduce_op = -1;
  std::vector<at::Tensor> tensors;
  Match match = Match::Shapes;
  // Pairwise only: elements this rank sends to and receives from each rank.
  std::vector<int64_t> send_elems, recv_elems;
};

// Raises c10::DistBackendError, naming every rank's part, when the ranks
// disagree; returns when they agree (one host all-gather of small rows).
void check_rank_agreement(CollectiveTransport& transport, int size, const OpSignature& sig);

// A 64-bit digest of what check_rank_agreement compares. Equal on two ranks
// when their rows are equal; `with_splits` false leaves out a pairwise op's
// per-rank counts (which differ between agreeing ranks of an uneven all_to_all).
uint64_t signature_digest(const OpSignature& sig, int size, bool with_splits);

}  // namespace torch_tpu::distributed
