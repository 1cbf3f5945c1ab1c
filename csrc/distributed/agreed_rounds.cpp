#include "distributed/agreed_rounds.h"

#include <limits>
#include <memory>

#include "device/host_access.h"
#include "distributed/host_staging.h"

namespace torch_tpu::distributed {

namespace {

using Ride = AgreedRounds::Ride;

// The all_reduce of `tensors` as a one-round ride, if it can be one: one
// tensor, a reduction whose identity element exists, a dtype whose slots
// carry small integers exactly.
std::optional<Ride> ride_of(const std::vector<at::Tensor>& tensors, const c10d::ReduceOp& op) {
  if (tensors.size() != 1) return std::nullopt;
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
    case c10d::ReduceOp::PRODUCT:
    case c10d::ReduceOp::MIN:
    case c10d::ReduceOp::MAX:
      break;
    default:
      return std::nullopt;
  }
  switch (tensors[0].scalar_type()) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kInt:
    case at::kLong:
      break;
    default:
      return std::nullopt;
  }
  return Ride{tensors[0].scalar_type(), tensors[0].numel(), op.op_};
}

// Bits of the digest per slot element: integers below 2^7 are exact in every
// dtype above (bfloat16 has 8 significant bits), below 2^16 in the 32-bit ones.
int64_t chunk_bits(c10::ScalarType dtype) {
  return dtype == at::kHalf || dtype == at::kBFloat16 ? 7 : 16;
}

// The reduction's identity: other ranks' slots arrive unchanged through it.
c10::Scalar identity(const Ride& ride) {
  const bool floating = c10::isFloatingType(ride.dtype);
  const double inf = std::numeric_limits<double>::infinity();
  switch (ride.op) {
    case c10d::ReduceOp::SUM: return 0;
    case c10d::ReduceOp::PRODUCT: return 1;
    case c10d::ReduceOp::MIN:
      if (floating) return inf;
      return ride.dtype == at::kInt ? c10::Scalar(std::numeric_limits<int32_t>::max())
                                    : c10::Scalar(std::numeric_limits<int64_t>::max());
    default:
      if (floating) return -inf;
      return ride.dtype == at::kInt ? c10::Scalar(std::numeric_limits<int32_t>::min())
                                    : c10::Scalar(std::numeric_limits<int64_t>::min());
  }
}

}  // namespace

AgreedRounds::AgreedRounds(int rank, int size) : rank_(rank), size_(size) {}

void AgreedRounds::check(CollectiveTransport& transport, const OpSignature& sig) {
  run(transport, sig, nullptr, std::nullopt);
}

bool AgreedRounds::check_and_allreduce(CollectiveTransport& transport, const OpSignature& sig,
                                       std::vector<at::Tensor>& tensors, const c10d::ReduceOp& op) {
  return run(transport, sig, &tensors, ride_of(tensors, op));
}

bool AgreedRounds::one_round(CollectiveTransport& transport, const OpSignature& sig, const Ride& predicted,
                             std::vector<at::Tensor>* tensors, bool rides, bool& agreed) {
  const int64_t bits = chunk_bits(predicted.dtype);
  const int64_t width = (64 + bits - 1) / bits;
  const int64_t total = predicted.numel + size_ * width;
  const at::TensorOptions cpu = at::TensorOptions().dtype(predicted.dtype).device(at::kCPU);
  // The round's buffer: where the result can become the tensor's buffer as
  // it is (device/host_access.h), a host block; otherwise plain host memory.
  std::shared_ptr<void> block;
  at::Tensor buffer;
  if (rides && (*tensors)[0].device().is_privateuseone() && (*tensors)[0].is_contiguous() && device::host_addressable()) {
    block = device::host_block(static_cast<size_t>(total) * c10::elementSize(predicted.dtype));
    buffer = at::from_blob(block.get(), {total}, [block](void*) {}, cpu);
  } else {
    buffer = at::empty({total}, cpu);
  }
  if (rides && predicted.numel > 0) {
    HostStaging staging;  // read in place where it can be
    buffer.narrow(0, 0, predicted.numel).copy_(staging.input((*tensors)[0]).reshape({-1}));
  }
  const uint64_t digest = signature_digest(sig, size_, /*with_splits=*/true);
  std::vector<int64_t> chunks(width);
  for (int64_t i = 0; i < width; ++i) chunks[i] = static_cast<int64_t>((digest >> (i * bits)) & ((1ULL << bits) - 1));
  at::Tensor slots = buffer.narrow(0, predicted.numel, size_ * width).view({size_, width});
  slots.fill_(identity(predicted));
  slots[rank_].copy_(at::tensor(chunks, at::kLong));

  transport.allreduce_host(buffer, c10d::ReduceOp(predicted.op));

  // Every rank sees the same slots, so every rank decides alike.
  at::Tensor got = slots.to(at::kLong);
  agreed = at::equal(got, got[0].unsqueeze(0).expand_as(got));
  if (!agreed || !rides) return false;
  at::Tensor& t = (*tensors)[0];
  if (!(block && device::install_host_block(t, block))) t.copy_(buffer.narrow(0, 0, predicted.numel).view(t.sizes()));
  return true;
}

bool AgreedRounds::run(CollectiveTransport& transport, const OpSignature& sig, std::vector<at::Tensor>* tensors,
                       const std::optional<Ride>& mine) {
  std::optional<Ride> predicted;
  if (auto it = next_.find(last_); it != next_.end() && it->second.times >= 2) predicted = it->second.ride;
  const uint64_t before = last_;
  last_ = 0;  // a check that raises leaves every rank here alike
  bool completed = false, agreed = false;
  if (predicted) completed = one_round(transport, sig, *predicted, tensors, mine && *mine == *predicted, agreed);
  // The plain check names every rank's part when the digests differ, and
  // compares an all_to_all's splits pairwise (equal digests do not mean that).
  if (!agreed || sig.match == OpSignature::Match::Pairwise) check_rank_agreement(transport, size_, sig);

  // Agreed: every rank learns the same.
  Next& n = next_[before];
  if (n.times > 0 && n.ride == mine) {
    n.times = std::min(n.times + 1, 2);
  } else {
    n = Next{mine, 1};
  }
  if (next_.size() > 4096) next_.clear();  // a bound; long-running loops relearn in two passes
  last_ = signature_digest(sig, size_, /*with_splits=*/false);
  if (completed) ++completed_;
  return completed;
}

}  // namespace torch_tpu::distributed
