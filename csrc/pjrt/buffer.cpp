#include "pjrt/buffer.h"

#include <atomic>
#include <string>
#include <utility>

#include "pjrt/api.h"
#include "pjrt/client.h"
#include "pjrt/error.h"
#include "pjrt/fault_injection.h"
#include "pjrt/pjrt_c_abi_sizes.h"

namespace torch_tpu::pjrt {
namespace {

// Plugins may treat a null data pointer as invalid even for empty arrays.
const char kNoData = 0;

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    out += (i ? "," : "") + std::to_string(dims[i]);
  }
  return out + "]";
}

int64_t count_elements(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

}  // namespace

namespace {
// PJRT_Client_BufferFromHostBuffer of dense row-major data; the caller owns
// the returned event and buffer.
abi::PJRT_Client_BufferFromHostBuffer_Args buffer_from_host(
    Client& client, const void* data, ElementType type,
    const std::vector<int64_t>& dims, const Device& device,
    abi::PJRT_HostBufferSemantics semantics) {
  const abi::PJRT_Api* c = client.api()->raw();
  auto args = abi::make<abi::PJRT_Client_BufferFromHostBuffer_Args>();
  args.client = client.raw();
  args.data = data;
  args.type = static_cast<abi::PJRT_Buffer_Type>(type);
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.host_buffer_semantics = semantics;
  args.device = device.raw();
  check(c, c->PJRT_Client_BufferFromHostBuffer(&args),
        "PJRT_Client_BufferFromHostBuffer");
  return args;
}
}  // namespace

std::shared_ptr<Buffer> Buffer::from_host(Client& client, const void* data,
                                          ElementType type,
                                          const std::vector<int64_t>& dims,
                                          const Device& device) {
  if (take_fault(FaultSite::HostToDevice)) throw Error(kInternal, "injected host-to-device transfer fault");
  for (int64_t d : dims) {
    if (d < 0) {
      throw Error(kInvalidArgument,
                  "Buffer::from_host: negative dimension in " +
                      dims_string(dims));
    }
  }
  if (element_size(type) == 0) {
    throw Error(kInvalidArgument,
                "Buffer::from_host: unsupported element type " +
                    std::to_string(static_cast<int>(type)));
  }
  if (data == nullptr) {
    if (count_elements(dims) != 0) {
      throw Error(kInvalidArgument, "Buffer::from_host: null data for " +
                                        dims_string(dims));
    }
    data = &kNoData;
  }
  const abi::PJRT_Api* c = client.api()->raw();
  auto args = buffer_from_host(client, data, type, dims, device,
                               abi::PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
  // With "only during call" semantics the host buffer is already released;
  // the event carries no information we need, but we own it.
  { Event done_with_host(c, args.done_with_host_buffer); }
  return adopt(client.shared_from_this(), args.buffer);
}

std::shared_ptr<Buffer> Buffer::from_host_zero_copy(
    Client& client, const void* data, ElementType type,
    const std::vector<int64_t>& dims, const Device& device,
    std::function<void()> on_released) {
  const abi::PJRT_Api* c = client.api()->raw();
  auto args = buffer_from_host(client, data, type, dims, device,
                               abi::PJRT_HostBufferSemantics_kImmutableZeroCopy);
  std::shared_ptr<Buffer> buffer = adopt(client.shared_from_this(), args.buffer);
  // Without the event nothing says when `data` is free again: the caller
  // copies instead.
  if (args.done_with_host_buffer == nullptr) return nullptr;
  // Fires when the plugin lets go of `data`: when the buffer is destroyed if
  // it aliased it, at once if it copied.
  Event done(c, args.done_with_host_buffer);
  done.on_ready(std::move(on_released));
  return buffer;
}

std::shared_ptr<Buffer> Buffer::adopt(std::shared_ptr<Client> client,
                                      abi::PJRT_Buffer* buffer) {
  if (buffer == nullptr) {
    throw Error(kInternal, "plugin returned a null PJRT_Buffer");
  }
  return std::shared_ptr<Buffer>(new Buffer(std::move(client), buffer));
}

namespace {
std::atomic<int64_t> live_buffers{0};
}  // namespace

Buffer::Buffer(std::shared_ptr<Client> client, abi::PJRT_Buffer* buffer)
    : client_(std::move(client)), buffer_(buffer) {
  const abi::PJRT_Api* c = client_->api()->raw();
  try {
    auto type = abi::make<abi::PJRT_Buffer_ElementType_Args>();
    type.buffer = buffer_;
    check(c, c->PJRT_Buffer_ElementType(&type), "PJRT_Buffer_ElementType");
    type_ = static_cast<ElementType>(type.type);

    auto dims = abi::make<abi::PJRT_Buffer_Dimensions_Args>();
    dims.buffer = buffer_;
    check(c, c->PJRT_Buffer_Dimensions(&dims), "PJRT_Buffer_Dimensions");
    dims_.assign(dims.dims, dims.dims + dims.num_dims);
  } catch (...) {
    auto destroy = abi::make<abi::PJRT_Buffer_Destroy_Args>();
    destroy.buffer = buffer_;
    check_noexcept(c, c->PJRT_Buffer_Destroy(&destroy), "PJRT_Buffer_Destroy");
    throw;
  }
  live_buffers.fetch_add(1, std::memory_order_relaxed);
}

int64_t Buffer::live_count() { return live_buffers.load(std::memory_order_relaxed); }

Buffer::~Buffer() {
  live_buffers.fetch_sub(1, std::memory_order_relaxed);
  const abi::PJRT_Api* c = client_->api()->raw();
  auto args = abi::make<abi::PJRT_Buffer_Destroy_Args>();
  args.buffer = buffer_;
  check_noexcept(c, c->PJRT_Buffer_Destroy(&args), "PJRT_Buffer_Destroy");
}

int64_t Buffer::element_count() const { return count_elements(dims_); }

size_t Buffer::host_size_bytes() const {
  return static_cast<size_t>(element_count()) * element_size(type_);
}

size_t Buffer::on_device_size_bytes() const {
  const abi::PJRT_Api* c = client_->api()->raw();
  auto args = abi::make<abi::PJRT_Buffer_OnDeviceSizeInBytes_Args>();
  args.buffer = buffer_;
  check(c, c->PJRT_Buffer_OnDeviceSizeInBytes(&args),
        "PJRT_Buffer_OnDeviceSizeInBytes");
  return args.on_device_size_in_bytes;
}

Device Buffer::device() const {
  const abi::PJRT_Api* c = client_->api()->raw();
  auto args = abi::make<abi::PJRT_Buffer_Device_Args>();
  args.buffer = buffer_;
  check(c, c->PJRT_Buffer_Device(&args), "PJRT_Buffer_Device");
  return Device(c, args.device);
}

Event Buffer::to_host_async(void* dst, size_t dst_size) {
  if (failure_) throw *failure_;
  if (take_fault(FaultSite::DeviceToHost)) throw Error(kInternal, "injected device-to-host transfer fault");
  const size_t needed = host_size_bytes();
  if (element_size(type_) == 0) {
    throw Error(kUnimplemented, std::string("to_host: element type ") +
                                    std::to_string(static_cast<int>(type_)) +
                                    " has no dense host layout here");
  }
  if (dst_size < needed) {
    throw Error(kInvalidArgument,
                "to_host: destination has " + std::to_string(dst_size) +
                    " bytes, " + element_type_name(type_) +
                    dims_string(dims_) + " needs " + std::to_string(needed));
  }
  // A null dst would turn the call into a size query.
  static char no_data;
  if (dst == nullptr) {
    if (needed != 0) throw Error(kInvalidArgument, "to_host: null dst");
    dst = &no_data;
  }

  // Ask for dense row-major explicitly: with no host layout the plugin would
  // use the device layout, which need not be row-major (e.g. on TPU).
  std::vector<int64_t> minor_to_major(dims_.size());
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    minor_to_major[i] = static_cast<int64_t>(minor_to_major.size() - 1 - i);
  }
  auto layout = abi::make<abi::PJRT_Buffer_MemoryLayout>();
  layout.type = abi::PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled = abi::make<abi::PJRT_Buffer_MemoryLayout_Tiled>();
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = minor_to_major.size();

  const abi::PJRT_Api* c = client_->api()->raw();
  auto args = abi::make<abi::PJRT_Buffer_ToHostBuffer_Args>();
  args.src = buffer_;
  args.host_layout = &layout;
  args.dst = dst;
  args.dst_size = dst_size;
  check(c, c->PJRT_Buffer_ToHostBuffer(&args), "PJRT_Buffer_ToHostBuffer");
  return Event(c, args.event, shared_from_this(), /*wait_on_destroy=*/true);
}

void Buffer::to_host(void* dst, size_t dst_size) {
  to_host_async(dst, dst_size).await();
}

Event Buffer::ready_event() {
  const abi::PJRT_Api* c = client_->api()->raw();
  auto args = abi::make<abi::PJRT_Buffer_ReadyEvent_Args>();
  args.buffer = buffer_;
  check(c, c->PJRT_Buffer_ReadyEvent(&args), "PJRT_Buffer_ReadyEvent");
  return Event(c, args.event);
}

std::shared_ptr<Buffer> Buffer::copy_to_device(const Device& device) {
  const abi::PJRT_Api* c = client_->api()->raw();
  auto args = abi::make<abi::PJRT_Buffer_CopyToDevice_Args>();
  args.buffer = buffer_;
  args.dst_device = device.raw();
  check(c, c->PJRT_Buffer_CopyToDevice(&args), "PJRT_Buffer_CopyToDevice");
  std::shared_ptr<Buffer> copy = adopt(client_, args.dst_buffer);
  copy->failure_ = failure_;
  return copy;
}

void Buffer::delete_now() {
  const abi::PJRT_Api* c = client_->api()->raw();
  auto args = abi::make<abi::PJRT_Buffer_Delete_Args>();
  args.buffer = buffer_;
  check(c, c->PJRT_Buffer_Delete(&args), "PJRT_Buffer_Delete");
}

bool Buffer::is_deleted() const {
  const abi::PJRT_Api* c = client_->api()->raw();
  auto args = abi::make<abi::PJRT_Buffer_IsDeleted_Args>();
  args.buffer = buffer_;
  check(c, c->PJRT_Buffer_IsDeleted(&args), "PJRT_Buffer_IsDeleted");
  return args.is_deleted;
}

std::shared_ptr<const void> Buffer::pinned_memory() {
  const abi::PJRT_Api* c = client_->api()->raw();
  if (c->struct_size < TPU_PJRT_API_ENTRY_END(PJRT_Buffer_OpaqueDeviceMemoryDataPointer) ||
      !c->PJRT_Buffer_IncreaseExternalReferenceCount || !c->PJRT_Buffer_DecreaseExternalReferenceCount ||
      !c->PJRT_Buffer_OpaqueDeviceMemoryDataPointer) {
    return nullptr;
  }
  auto inc = abi::make<abi::PJRT_Buffer_IncreaseExternalReferenceCount_Args>();
  inc.buffer = buffer_;
  check(c, c->PJRT_Buffer_IncreaseExternalReferenceCount(&inc),
        "PJRT_Buffer_IncreaseExternalReferenceCount");
  std::shared_ptr<Buffer> self = shared_from_this();
  // Owns one external reference: dropping the last copy gives it back.
  std::shared_ptr<Buffer> pin(self.get(), [self, c](Buffer* b) {
    auto dec = abi::make<abi::PJRT_Buffer_DecreaseExternalReferenceCount_Args>();
    dec.buffer = b->buffer_;
    check_noexcept(c, c->PJRT_Buffer_DecreaseExternalReferenceCount(&dec),
                   "PJRT_Buffer_DecreaseExternalReferenceCount");
  });
  return std::shared_ptr<const void>(pin, opaque_device_pointer());
}

const void* Buffer::device_address() const {
  const abi::PJRT_Api* c = client_->api()->raw();
  if (c->struct_size < TPU_PJRT_API_ENTRY_END(PJRT_Buffer_OpaqueDeviceMemoryDataPointer) ||
      !c->PJRT_Buffer_OpaqueDeviceMemoryDataPointer || is_deleted())
    return nullptr;
  return opaque_device_pointer();
}

const void* Buffer::opaque_device_pointer() const {
  const abi::PJRT_Api* c = client_->api()->raw();
  auto ptr = abi::make<abi::PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>();
  ptr.buffer = buffer_;
  check(c, c->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&ptr), "PJRT_Buffer_OpaqueDeviceMemoryDataPointer");
  return ptr.device_memory_ptr;
}

}  // namespace torch_tpu::pjrt
