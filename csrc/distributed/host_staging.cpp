#include "distributed/host_staging.h"

#include <cstring>

#include "device/host_access.h"

namespace torch_tpu::distributed {

namespace {
bool usable_in_place(const at::Tensor& t) { return t.device().is_cpu() && t.is_contiguous(); }
bool on_tpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }
// `t`'s part of a flat host buffer: its first t.numel() elements, shaped as `t`.
at::Tensor head_of(const at::Tensor& flat, const at::Tensor& t) { return flat.narrow(0, 0, t.numel()).view(t.sizes()); }
}  // namespace

at::Tensor HostStaging::block_for(const at::Tensor& t, int64_t extra) {
  if (!on_tpu(t) || !t.is_contiguous() || !device::host_addressable()) return {};
  const int64_t total = t.numel() + extra;
  std::shared_ptr<void> block = device::host_block(static_cast<size_t>(total) * t.element_size());
  at::Tensor flat = at::from_blob(block.get(), {total}, [block](void*) {}, t.options().device(at::kCPU));
  back_.push_back(Back{t, head_of(flat, t), std::move(block)});
  return flat;
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
      at::Tensor flat = block_for(t, 0);
      if (flat.defined()) {
        std::memcpy(flat.data_ptr(), alias.const_data_ptr(), t.nbytes());
        return head_of(flat, t);
      }
    }
  }
  at::Tensor host = t.to(at::kCPU).contiguous();
  back_.push_back(Back{t, host, nullptr});
  return host;
}

at::Tensor HostStaging::output(const at::Tensor& t) {
  if (usable_in_place(t)) return t;
  return head_of(output_with_room(t, 0), t);
}

at::Tensor HostStaging::output_with_room(const at::Tensor& t, int64_t extra) {
  at::Tensor flat = block_for(t, extra);
  if (flat.defined()) return flat;
  flat = at::empty({t.numel() + extra}, t.options().device(at::kCPU));
  back_.push_back(Back{t, head_of(flat, t), nullptr});
  return flat;
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
