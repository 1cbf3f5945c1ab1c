// A dense array resident on one device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "pjrt/device.h"
#include "pjrt/element_type.h"
#include "pjrt/event.h"

namespace torch_tpu::pjrt {

class Client;

namespace abi {
struct PJRT_Buffer;
}

// Owned through std::shared_ptr; the destructor calls PJRT_Buffer_Destroy
// (the plugin frees device memory once pending work using it is done).
// Element type and dims are read once at construction.
class Buffer : public std::enable_shared_from_this<Buffer> {
 public:
  // Copies dense row-major host data to `device`. The host memory is only
  // read during the call ("immutable only during call" semantics), so the
  // caller may free or reuse `data` as soon as this returns. `data` may be
  // null when the array has no elements. The transfer itself may still be in
  // flight; ready_event() tracks it, and later uses of the buffer wait for it
  // implicitly.
  static std::shared_ptr<Buffer> from_host(Client& client, const void* data,
                                           ElementType type,
                                           const std::vector<int64_t>& dims,
                                           const Device& device);

  // A buffer over `data` itself where the plugin can alias host memory (the
  // CPU plugin, for aligned dense data): "immutable zero copy" semantics, so
  // the caller must not write `data` until `on_released` has run, which the
  // plugin calls once it no longer needs `data` (at once if it copied).
  // Null (and `on_released` never called) when the plugin gives no such
  // signal: the caller then copies instead.
  static std::shared_ptr<Buffer> from_host_zero_copy(
      Client& client, const void* data, ElementType type,
      const std::vector<int64_t>& dims, const Device& device,
      std::function<void()> on_released);

  // Takes ownership of a PJRT_Buffer produced by the plugin.
  static std::shared_ptr<Buffer> adopt(std::shared_ptr<Client> client,
                                       abi::PJRT_Buffer* buffer);

  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  ElementType element_type() const { return type_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t element_count() const;
  // Size of the dense row-major host copy: element_count * element_size.
  size_t host_size_bytes() const;
  // Bytes the buffer occupies on the device (may include padding/tiling).
  size_t on_device_size_bytes() const;
  Device device() const;

  // Starts copying the contents to `dst` as dense row-major data;
  // `dst_size` must be >= host_size_bytes(). The caller keeps `dst` alive
  // until the returned Event is done; the Event waits for the copy if it is
  // destroyed first, and keeps this Buffer alive meanwhile.
  Event to_host_async(void* dst, size_t dst_size);
  // Same, waiting for the copy. Throws Error on failure.
  void to_host(void* dst, size_t dst_size);

  // Becomes ready once the buffer's contents are computed/transferred; holds
  // an error if producing them failed.
  Event ready_event();

  // Copies to another device of the same client.
  std::shared_ptr<Buffer> copy_to_device(const Device& device);

  // The buffer's memory, pinned (external reference count) while the
  // returned pointer lives; it keeps this Buffer alive too. Null when the
  // plugin lacks the entries. Only plugins whose device memory is host
  // memory (platform "cpu") make this readable from the host, and only once
  // ready_event() is done; the buffer stays immutable: never write through it.
  std::shared_ptr<const void> pinned_memory();
  // Where the plugin placed the buffer (an opaque device address), for
  // diagnostics only (eager/buffer_trace.h): never dereferenced. Null when
  // the plugin lacks the entry or the buffer was deleted or donated.
  const void* device_address() const;

  // Releases the device memory now; the object stays valid for is_deleted().
  void delete_now();
  // True after delete_now() or after the buffer was donated to an execution.
  bool is_deleted() const;

  abi::PJRT_Buffer* raw() const { return buffer_; }
  const std::shared_ptr<Client>& client() const { return client_; }

  // The error of the execution that produced this buffer, when it failed by
  // injection (fault_injection.h); reads throw it. Null otherwise.
  const std::shared_ptr<const Error>& failure() const { return failure_; }

  // Buffer objects alive in this process (a leak check for long runs).
  static int64_t live_count();
  void set_failure(std::shared_ptr<const Error> e) { failure_ = std::move(e); }

 private:
  Buffer(std::shared_ptr<Client> client, abi::PJRT_Buffer* buffer);
  // PJRT_Buffer_OpaqueDeviceMemoryDataPointer, for a plugin that has it.
  const void* opaque_device_pointer() const;

  std::shared_ptr<Client> client_;
  abi::PJRT_Buffer* buffer_;
  ElementType type_ = ElementType::Invalid;
  std::vector<int64_t> dims_;
  std::shared_ptr<const Error> failure_;
};

}  // namespace torch_tpu::pjrt
