// The Work a tpu collective returns. The host-staging transport finishes a
// collective before returning (the device→host copy waits for the data
// anyway), so the Work is complete on arrival; its future carries the output
// tensors, which DDP's communication hooks read.
#pragma once
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <vector>

namespace torch_tpu::distributed {

class CompletedWork : public c10d::Work {
 public:
  CompletedWork(int rank, c10d::OpType op, std::vector<at::Tensor> outputs, int source_rank = -1);

  bool isCompleted() override { return true; }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds timeout) override;
  void synchronize() override {}
  int sourceRank() const override;
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  int source_rank_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace torch_tpu::distributed
