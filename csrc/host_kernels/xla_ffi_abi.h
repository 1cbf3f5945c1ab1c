// Our declarations of the slice of the XLA FFI C ABI a typed custom-call
// handler needs: the call frame XLA passes it, buffer arguments and results,
// the metadata query it answers at registration, and creating an error.
// Written from the documented ABI (XLA FFI API 0.x: every struct starts with
// struct_size and an extension pointer; fields only ever appended); layout
// facts asserted below (LP64).
#pragma once

#include <cstddef>
#include <cstdint>

namespace torch_tpu::host_kernels::ffi {
extern "C" {

struct Error;  // XLA_FFI_Error, opaque
struct ExecutionContext;

struct ExtensionBase {
  size_t struct_size;
  int type;  // 1: the metadata extension
  ExtensionBase* next;
};
constexpr int kExtensionMetadata = 1;

struct ApiVersion {
  size_t struct_size;
  ExtensionBase* extension_start;
  int major_version;
  int minor_version;
};

// Element types (the values of xla::PrimitiveType).
enum DataType : int { kS32 = 4, kS64 = 5, kF32 = 11, kBF16 = 16 };
enum ArgType : int { kArgBuffer = 1 };
enum RetType : int { kRetBuffer = 1 };
enum Stage : int { kInstantiate = 0, kPrepare = 1, kInitialize = 2, kExecute = 3 };

struct Buffer {
  size_t struct_size;
  ExtensionBase* extension_start;
  DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims;
};

struct Args {
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  ArgType* types;
  void** args;
};

struct Rets {
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  RetType* types;
  void** rets;
};

struct Attrs {
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  int* types;
  void** names;
  void** attrs;
};

struct Api;

struct CallFrame {
  size_t struct_size;
  ExtensionBase* extension_start;
  const Api* api;
  ExecutionContext* ctx;
  Stage stage;
  Args args;
  Rets rets;
  Attrs attrs;
};

struct ErrorCreateArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const char* message;
  int errc;  // absl status code
};

struct ErrorDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Error* error;
};

using Task = void (*)(void* data);

// Runs `task(data)` on the executable's intra-op thread pool (the CPU
// plugin's worker threads).
struct ThreadPoolScheduleArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  ExecutionContext* ctx;
  Task task;
  void* data;
};

struct ThreadPoolNumThreadsArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  ExecutionContext* ctx;
  int64_t* num_threads;
};

// XLA_FFI_Api up to the thread-pool entries: its version, an internal
// pointer, then the function table in its fixed order (entries we never
// call are placeholders that keep the offsets right).
struct Api {
  size_t struct_size;
  ExtensionBase* extension_start;
  ApiVersion api_version;
  const void* internal_api;
  Error* (*error_create)(ErrorCreateArgs*);
  void* error_get_message;
  void (*error_destroy)(ErrorDestroyArgs*);
  void* handler_register;
  void* stream_get;
  void* type_register;
  void* execution_context_get;
  void* state_set;
  void* state_get;
  void* device_memory_allocate;
  void* device_memory_free;
  Error* (*thread_pool_schedule)(ThreadPoolScheduleArgs*);
  Error* (*thread_pool_num_threads)(ThreadPoolNumThreadsArgs*);
};

// What a handler reports when XLA queries it (extension_start of the call
// frame is a MetadataExtension): the FFI API version it was built against
// and its traits.
struct Metadata {
  size_t struct_size;
  ApiVersion api_version;
  uint32_t traits;
};

struct MetadataExtension {
  ExtensionBase extension_base;
  Metadata* metadata;
};

using Handler = Error* (*)(CallFrame*);

}  // extern "C"

static_assert(offsetof(Buffer, data) == 24 && offsetof(Buffer, dims) == 40);
static_assert(offsetof(CallFrame, stage) == 32 && offsetof(CallFrame, args) == 40);
static_assert(offsetof(CallFrame, rets) == 80 && offsetof(CallFrame, attrs) == 120);
static_assert(offsetof(Api, error_create) == 48);
static_assert(offsetof(Api, thread_pool_schedule) == 136 && offsetof(Api, thread_pool_num_threads) == 144);
static_assert(offsetof(Metadata, traits) == 32);

// The FFI API version our declarations follow.
constexpr int kApiMajor = 0;
constexpr int kApiMinor = 1;

}  // namespace torch_tpu::host_kernels::ffi
