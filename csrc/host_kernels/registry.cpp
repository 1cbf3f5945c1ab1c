#include "host_kernels/registry.h"

#include <atomic>
#include <cstring>

namespace torch_tpu::host_kernels {

ffi::Error* ragged_dot_rows(ffi::CallFrame* frame);  // ragged_dot_rows.cpp

namespace {
std::atomic<bool> ragged_dot_rows_registered{false};

std::atomic<bool>* flag_of(const char* target) {
  if (std::strcmp(target, kRaggedDotRows) == 0) return &ragged_dot_rows_registered;
  return nullptr;
}
}  // namespace

std::vector<HostKernel> all() { return {{kRaggedDotRows, &ragged_dot_rows}}; }

void mark_registered(const char* target) {
  if (auto* f = flag_of(target)) f->store(true);
}

bool registered(const char* target) {
  auto* f = flag_of(target);
  return f != nullptr && f->load();
}

}  // namespace torch_tpu::host_kernels
