#include "device/host_access.h"

#include <ATen/ops/from_blob.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "device/runtime.h"
#include "device/storage_slot.h"

namespace torch_tpu::device {

namespace {

// The CPU plugin aliases host data aligned to 64 bytes; a page keeps large
// blocks off shared cache lines too.
constexpr size_t kAlignment = 4096;
// Freed blocks kept for reuse (a fresh block costs a page fault per 4 KB).
constexpr size_t kPoolBytes = size_t{512} << 20;

struct Pool {
  std::mutex mu;
  std::multimap<size_t, void*> free;  // by size
  size_t free_bytes = 0;

  void* take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = free.find(bytes);
      if (it != free.end()) {
        void* p = it->second;
        free.erase(it);
        free_bytes -= bytes;
        return p;
      }
    }
    void* p = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    TORCH_CHECK(p, "torch_tpu: out of host memory for a ", bytes, "-byte collective buffer");
    return p;
  }

  void give_back(void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu);
    while (free_bytes + bytes > kPoolBytes && !free.empty()) {  // the largest go first
      auto last = std::prev(free.end());
      free_bytes -= last->first;
      std::free(last->second);
      free.erase(last);
    }
    if (bytes > kPoolBytes) {
      std::free(p);
      return;
    }
    free.emplace(bytes, p);
    free_bytes += bytes;
  }
};

Pool& pool() {
  static auto* p = new Pool();
  return *p;
}

// `t` is all of its storage, and the storage's buffer shape holds exactly its bytes.
bool covers_whole_storage(const at::Tensor& t, const StorageSlot& slot) {
  return t.is_contiguous() && t.storage_offset() == 0 &&
         static_cast<size_t>(t.numel()) * t.element_size() == slot.nbytes &&
         static_cast<size_t>(slot.layout.numel() * hlo::dtype_bytes(slot.layout.dtype)) == slot.nbytes;
}

}  // namespace

bool host_addressable() {
  static const bool yes = [] {
    // TORCH_TPU_HOST_ACCESS=0 turns it off (benchmarks compare the two).
    if (const char* v = std::getenv("TORCH_TPU_HOST_ACCESS"); v && std::string(v) == "0") return false;
    Runtime& rt = runtime();
    return rt.client->platform_name() == "cpu";
  }();
  return yes;
}

at::Tensor host_alias(const at::Tensor& t) {
  if (!host_addressable() || t.device().type() != c10::DeviceType::PrivateUse1) return {};
  StorageSlot& slot = slot_of(*t.unsafeGetTensorImpl());
  std::shared_ptr<pjrt::Buffer> buffer = slot.buffer();
  if (!buffer || buffer->on_device_size_bytes() != slot.nbytes) return {};
  buffer->ready_event().await();
  std::shared_ptr<const void> memory = buffer->pinned_memory();
  if (!memory) return {};
  char* base = static_cast<char*>(const_cast<void*>(memory.get()));
  return at::from_blob(base + t.storage_offset() * t.element_size(), t.sizes(), t.strides(),
                       [memory](void*) {}, t.options().device(at::kCPU));
}

std::shared_ptr<void> host_block(size_t bytes) {
  void* p = pool().take(bytes);
  return std::shared_ptr<void>(p, [bytes](void* q) { pool().give_back(q, bytes); });
}

bool install_host_block(const at::Tensor& t, std::shared_ptr<void> block) {
  if (!host_addressable() || t.device().type() != c10::DeviceType::PrivateUse1) return false;
  StorageSlot& slot = slot_of(*t.unsafeGetTensorImpl());
  if (!covers_whole_storage(t, slot) || slot.nbytes == 0) return false;
  Runtime& rt = runtime();
  const void* data = block.get();
  std::shared_ptr<pjrt::Buffer> buffer = pjrt::Buffer::from_host_zero_copy(
      *rt.client, data, to_pjrt(slot.layout.dtype), slot.layout.dims, pjrt_device(slot.device_index),
      [block]() mutable { block.reset(); });
  if (!buffer) return false;
  slot.set(std::move(buffer), slot.layout, "a collective");
  // As the copy_ it replaces would: autograd sees `t` was written.
  if (!t.is_inference()) t.unsafeGetTensorImpl()->bump_version();
  return true;
}

}  // namespace torch_tpu::device
