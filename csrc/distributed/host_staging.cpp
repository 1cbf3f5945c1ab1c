#include "distributed/host_staging.h"

#include <cstring>

#include "device/host_access.h"

namespace torch_tpu::distributed {

namespace {
bool usable_in_place(const at::Tensor& t) { return t.device().is_cpu() && t.is_contiguous(); }
bool on_tpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }
}  // namespace

at::Tensor HostStaging::block_for(const at::Tensor& t, const at::Tensor& initial) {
  if (!on_tpu(t) || !t.is_contiguous() || !device::host_addressable()) return {};
  std::shared_ptr<void> block = device::host_block(t.nbytes());
  at::Tensor host = device::host_tensor(block, t);
  if (initial.defined()) std::memcpy(block.get(), initial.const_data_ptr(), t.nbytes());
  back_.push_back(Back{t, host, std::move(block)});
  return host;
}

at::Tensor HostStaging::input(const at::Tensor& t) {
  if (usable_in_place(t)) return t;
  at::Tensor alias = device::host_alias(t);
  at::Tensor host = alias.defined() ? alias.contiguous() : t.to(at::kCPU).contiguous();
  held_.push_back(host);
  return host;
}

at::Tensor HostStaging::inout(const at::Tensor& t) {
  if (usable_in_place(t)) return t;
  if (t.is_contiguous()) {
    at::Tensor alias = device::host_alias(t);
    if (alias.defined()) {
      at::Tensor host = block_for(t, alias);
      if (host.defined()) return host;
    }
  }
  at::Tensor host = t.to(at::kCPU).contiguous();
  back_.push_back(Back{t, host, nullptr});
  return host;
}

at::Tensor HostStaging::output(const at::Tensor& t) {
  if (usable_in_place(t)) return t;
  at::Tensor host = block_for(t, at::Tensor());
  if (host.defined()) return host;
  host = at::empty(t.sizes(), t.options().device(at::kCPU));
  back_.push_back(Back{t, host, nullptr});
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
  for (Back& b : back_) {
    // A block becomes the storage's buffer as it is; otherwise (a view of a
    // larger storage, or no host-addressable device) a copy.
    if (b.block && device::install_host_block(b.dst, b.block)) continue;
    b.dst.copy_(b.host);
  }
  back_.clear();
}

}  // namespace torch_tpu::distributed
