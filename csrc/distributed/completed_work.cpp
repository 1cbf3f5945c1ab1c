#include "distributed/completed_work.h"

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>

namespace torch_tpu::distributed {

namespace {
// A Future must name the devices its value's tensors live on (it refuses
// tensors on others); CPU tensors need none.
std::vector<c10::Device> devices_of(const std::vector<at::Tensor>& tensors) {
  std::vector<c10::Device> devices;
  for (const auto& t : tensors) {
    if (!t.defined() || t.device().is_cpu()) continue;
    if (std::find(devices.begin(), devices.end(), t.device()) == devices.end()) devices.push_back(t.device());
  }
  return devices;
}
}  // namespace

CompletedWork::CompletedWork(int rank, c10d::OpType op, std::vector<at::Tensor> outputs, int source_rank)
    : c10d::Work(rank, op), outputs_(std::move(outputs)), source_rank_(source_rank) {
  future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                     devices_of(outputs_));
  future_->markCompleted(c10::IValue(outputs_));
}

bool CompletedWork::wait(std::chrono::milliseconds /*timeout*/) { return true; }

int CompletedWork::sourceRank() const {
  TORCH_CHECK(source_rank_ >= 0, "sourceRank() is only defined for a recv from any source");
  return source_rank_;
}

}  // namespace torch_tpu::distributed
