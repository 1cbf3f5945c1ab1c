#include "distributed/host_staging.h"

namespace torch_tpu::distributed {

namespace {
bool usable_in_place(const at::Tensor& t) { return t.device().is_cpu() && t.is_contiguous(); }
}  // namespace

at::Tensor HostStaging::input(const at::Tensor& t) {
  if (usable_in_place(t)) return t;
  at::Tensor host = t.to(at::kCPU).contiguous();
  held_.push_back(host);
  return host;
}

at::Tensor HostStaging::inout(const at::Tensor& t) {
  if (usable_in_place(t)) return t;
  at::Tensor host = t.to(at::kCPU).contiguous();
  back_.emplace_back(t, host);
  return host;
}

at::Tensor HostStaging::output(const at::Tensor& t) {
  if (usable_in_place(t)) return t;
  at::Tensor host = at::empty(t.sizes(), t.options().device(at::kCPU));
  back_.emplace_back(t, host);
  return host;
}

std::vector<at::Tensor> HostStaging::inputs(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const auto& t : ts) out.push_back(input(t));
  return out;
}

std::vector<at::Tensor> HostStaging::inouts(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const auto& t : ts) out.push_back(inout(t));
  return out;
}

std::vector<at::Tensor> HostStaging::outputs(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const auto& t : ts) out.push_back(output(t));
  return out;
}

std::vector<std::vector<at::Tensor>> HostStaging::inputs(const std::vector<std::vector<at::Tensor>>& ts) {
  std::vector<std::vector<at::Tensor>> out;
  for (const auto& list : ts) out.push_back(inputs(list));
  return out;
}

std::vector<std::vector<at::Tensor>> HostStaging::outputs(const std::vector<std::vector<at::Tensor>>& ts) {
  std::vector<std::vector<at::Tensor>> out;
  for (const auto& list : ts) out.push_back(outputs(list));
  return out;
}

void HostStaging::write_back() {
  for (auto& [dst, host] : back_) dst.copy_(host);
  back_.clear();
}

}  // namespace torch_tpu::distributed
