// Our own declarations of the slice of the PJRT C API (major version 0) that
// torch_tpu uses. Written from the ABI facts of PJRT API 0.81; the upstream
// header is deliberately not included (see docs in api.h for the versioning
// rules we rely on).
//
// ABI rules followed here:
//  * Every args struct starts with `size_t struct_size` and an extension
//    pointer, and its fields are laid out exactly as the plugin expects. We
//    declare each args struct up to its last field as of 0.81, so struct_size
//    (offset of that last field + its size) matches what a 0.81 plugin checks.
//  * Plugins accept a larger struct_size from a newer caller, and reject a
//    smaller one with INVALID_ARGUMENT, so older plugins (>= kMinApiMinor)
//    accept these structs.
//  * PJRT_Api is a table of function pointers in a fixed order. We declare it
//    up to the last entry we call; entries we never call are `void*` slots
//    that only keep the order and count right.
// struct_size values, the zero-filling builder and the asserted layout facts
// are in pjrt_c_abi_sizes.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torch_tpu::pjrt::abi {
extern "C" {

// ------------------------------ opaque handles ------------------------------
struct PJRT_Error;
struct PJRT_Event;
struct PJRT_Client;
struct PJRT_Device;
struct PJRT_DeviceDescription;
struct PJRT_Memory;
struct PJRT_Executable;
struct PJRT_LoadedExecutable;
struct PJRT_SerializedExecutable;
struct PJRT_Buffer;
struct PJRT_ExecuteContext;
struct PJRT_SendCallbackInfo;
struct PJRT_RecvCallbackInfo;

// Only ever passed as nullptr by us; the layout matters for the field after it.
struct PJRT_Extension_Base {
  size_t struct_size;
  int type;
  PJRT_Extension_Base* next;
};

struct PJRT_Api_Version {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  int major_version;
  int minor_version;
};

// ----------------------------------- enums ----------------------------------
// Numeric values are ABI (absl status codes).
enum PJRT_Error_Code : int {
  PJRT_Error_Code_OK = 0,
  PJRT_Error_Code_CANCELLED = 1,
  PJRT_Error_Code_UNKNOWN = 2,
  PJRT_Error_Code_INVALID_ARGUMENT = 3,
  PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
  PJRT_Error_Code_NOT_FOUND = 5,
  PJRT_Error_Code_ALREADY_EXISTS = 6,
  PJRT_Error_Code_PERMISSION_DENIED = 7,
  PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
  PJRT_Error_Code_FAILED_PRECONDITION = 9,
  PJRT_Error_Code_ABORTED = 10,
  PJRT_Error_Code_OUT_OF_RANGE = 11,
  PJRT_Error_Code_UNIMPLEMENTED = 12,
  PJRT_Error_Code_INTERNAL = 13,
  PJRT_Error_Code_UNAVAILABLE = 14,
  PJRT_Error_Code_DATA_LOSS = 15,
  PJRT_Error_Code_UNAUTHENTICATED = 16,
};

enum PJRT_NamedValue_Type : int {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64 = 1,
  PJRT_NamedValue_kInt64List = 2,
  PJRT_NamedValue_kFloat = 3,
  PJRT_NamedValue_kBool = 4,
};

// Element types travel as the plain int of torch_tpu::pjrt::ElementType
// (element_type.h), which mirrors PJRT_Buffer_Type's numbering.
using PJRT_Buffer_Type = int;

enum PJRT_HostBufferSemantics : int {
  PJRT_HostBufferSemantics_kImmutableOnlyDuringCall = 0,
  PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes = 1,
  PJRT_HostBufferSemantics_kImmutableZeroCopy = 2,
  PJRT_HostBufferSemantics_kMutableZeroCopy = 3,
};

enum PJRT_Buffer_MemoryLayout_Type : int {
  PJRT_Buffer_MemoryLayout_Type_Tiled = 0,
  PJRT_Buffer_MemoryLayout_Type_Strides = 1,
};

// ------------------------------ common structs ------------------------------
struct PJRT_NamedValue {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char* string_value;
    int64_t int64_value;
    const int64_t* int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size;  // element count for strings/lists, 1 for scalars
};

struct PJRT_Buffer_MemoryLayout_Tiled {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const int64_t* minor_to_major;
  size_t minor_to_major_size;
  const int64_t* tile_dims;
  const size_t* tile_dim_sizes;
  size_t num_tiles;
};

struct PJRT_Buffer_MemoryLayout_Strides {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const int64_t* byte_strides;
  size_t num_byte_strides;
};

struct PJRT_Buffer_MemoryLayout {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  union {
    PJRT_Buffer_MemoryLayout_Tiled tiled;
    PJRT_Buffer_MemoryLayout_Strides strides;
  };
  PJRT_Buffer_MemoryLayout_Type type;
};

struct PJRT_Program {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  char* code;  // not const in the ABI; never written by Compile
  size_t code_size;
  const char* format;
  size_t format_size;
};

// ------------------------------- args structs -------------------------------
// Naming: <Function>_Args, fields in ABI order. "out" fields are written by
// the plugin.
#define TPU_PJRT_ARGS(name) struct name##_Args
#define TPU_PJRT_HEAD               \
  size_t struct_size;               \
  PJRT_Extension_Base* extension_start

TPU_PJRT_ARGS(PJRT_Error_Destroy) { TPU_PJRT_HEAD; PJRT_Error* error; };
TPU_PJRT_ARGS(PJRT_Error_Message) {
  TPU_PJRT_HEAD;
  const PJRT_Error* error;
  const char* message;  // out, lives as long as `error`
  size_t message_size;  // out
};
TPU_PJRT_ARGS(PJRT_Error_GetCode) {
  TPU_PJRT_HEAD;
  const PJRT_Error* error;
  PJRT_Error_Code code;  // out
};

TPU_PJRT_ARGS(PJRT_Plugin_Initialize) { TPU_PJRT_HEAD; };
TPU_PJRT_ARGS(PJRT_Plugin_Attributes) {
  TPU_PJRT_HEAD;
  const PJRT_NamedValue* attributes;  // out, process lifetime
  size_t num_attributes;              // out
};

TPU_PJRT_ARGS(PJRT_Event_Destroy) { TPU_PJRT_HEAD; PJRT_Event* event; };
TPU_PJRT_ARGS(PJRT_Event_IsReady) {
  TPU_PJRT_HEAD;
  PJRT_Event* event;
  bool is_ready;  // out
};
TPU_PJRT_ARGS(PJRT_Event_Await) { TPU_PJRT_HEAD; PJRT_Event* event; };
// Called once the event is ready, on a plugin thread, with the event's error
// (owned by the callback, which must destroy it; null on success).
typedef void (*PJRT_Event_OnReadyCallback)(PJRT_Error* error, void* user_arg);
TPU_PJRT_ARGS(PJRT_Event_OnReady) {
  TPU_PJRT_HEAD;
  PJRT_Event* event;
  PJRT_Event_OnReadyCallback callback;
  void* user_arg;
};

// The key-value callbacks are for multi-process setups we do not use; they
// are function pointers in the ABI, kept here as pointer-sized slots.
TPU_PJRT_ARGS(PJRT_Client_Create) {
  TPU_PJRT_HEAD;
  const PJRT_NamedValue* create_options;
  size_t num_options;
  void* kv_get_callback;
  void* kv_get_user_arg;
  void* kv_put_callback;
  void* kv_put_user_arg;
  PJRT_Client* client;  // out
  void* kv_try_get_callback;
  void* kv_try_get_user_arg;
};
TPU_PJRT_ARGS(PJRT_Client_Destroy) { TPU_PJRT_HEAD; PJRT_Client* client; };
TPU_PJRT_ARGS(PJRT_Client_PlatformName) {
  TPU_PJRT_HEAD;
  PJRT_Client* client;
  const char* platform_name;  // out, owned by client
  size_t platform_name_size;  // out
};
TPU_PJRT_ARGS(PJRT_Client_ProcessIndex) {
  TPU_PJRT_HEAD;
  PJRT_Client* client;
  int process_index;  // out
};
TPU_PJRT_ARGS(PJRT_Client_PlatformVersion) {
  TPU_PJRT_HEAD;
  PJRT_Client* client;
  const char* platform_version;  // out, owned by client
  size_t platform_version_size;  // out
};
TPU_PJRT_ARGS(PJRT_Client_AddressableDevices) {
  TPU_PJRT_HEAD;
  PJRT_Client* client;
  PJRT_Device* const* addressable_devices;  // out, owned by client
  size_t num_addressable_devices;           // out
};
TPU_PJRT_ARGS(PJRT_Client_Compile) {
  TPU_PJRT_HEAD;
  PJRT_Client* client;
  const PJRT_Program* program;
  const char* compile_options;  // serialized xla.CompileOptionsProto
  size_t compile_options_size;
  PJRT_LoadedExecutable* executable;  // out
};
TPU_PJRT_ARGS(PJRT_Client_BufferFromHostBuffer) {
  TPU_PJRT_HEAD;
  PJRT_Client* client;
  const void* data;
  PJRT_Buffer_Type type;
  const int64_t* dims;
  size_t num_dims;
  const int64_t* byte_strides;  // nullptr: dense major-to-minor
  size_t num_byte_strides;
  PJRT_HostBufferSemantics host_buffer_semantics;
  PJRT_Device* device;
  PJRT_Memory* memory;                      // nullptr: device's default
  PJRT_Buffer_MemoryLayout* device_layout;  // nullptr: plugin's default
  PJRT_Event* done_with_host_buffer;        // out, caller destroys
  PJRT_Buffer* buffer;                      // out, caller destroys
};

TPU_PJRT_ARGS(PJRT_DeviceDescription_Id) {
  TPU_PJRT_HEAD;
  PJRT_DeviceDescription* device_description;
  int id;  // out
};
// Kind, DebugString and ToString share one shape: a description in, a
// string (owned by the device) out.
#define TPU_PJRT_DESCRIPTION_STRING_ARGS(name, field) \
  TPU_PJRT_ARGS(name) {                               \
    TPU_PJRT_HEAD;                                    \
    PJRT_DeviceDescription* device_description;       \
    const char* field;                                \
    size_t field##_size;                              \
  }
TPU_PJRT_DESCRIPTION_STRING_ARGS(PJRT_DeviceDescription_Kind, device_kind);
TPU_PJRT_DESCRIPTION_STRING_ARGS(PJRT_DeviceDescription_DebugString,
                                 debug_string);
TPU_PJRT_DESCRIPTION_STRING_ARGS(PJRT_DeviceDescription_ToString, to_string);
#undef TPU_PJRT_DESCRIPTION_STRING_ARGS

TPU_PJRT_ARGS(PJRT_Device_GetDescription) {
  TPU_PJRT_HEAD;
  PJRT_Device* device;
  PJRT_DeviceDescription* device_description;  // out, owned by device
};
TPU_PJRT_ARGS(PJRT_Device_LocalHardwareId) {
  TPU_PJRT_HEAD;
  PJRT_Device* device;
  int local_hardware_id;  // out, -1 if undefined
};
// Every stat except bytes_in_use is optional, flagged by its *_is_set.
TPU_PJRT_ARGS(PJRT_Device_MemoryStats) {
  TPU_PJRT_HEAD;
  PJRT_Device* device;
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  bool peak_bytes_in_use_is_set;
  int64_t num_allocs;
  bool num_allocs_is_set;
  int64_t largest_alloc_size;
  bool largest_alloc_size_is_set;
  int64_t bytes_limit;
  bool bytes_limit_is_set;
  int64_t bytes_reserved;
  bool bytes_reserved_is_set;
  int64_t peak_bytes_reserved;
  bool peak_bytes_reserved_is_set;
  int64_t bytes_reservable_limit;
  bool bytes_reservable_limit_is_set;
  int64_t largest_free_block_bytes;
  bool largest_free_block_bytes_is_set;
  int64_t pool_bytes;
  bool pool_bytes_is_set;
  int64_t peak_pool_bytes;
  bool peak_pool_bytes_is_set;
};

TPU_PJRT_ARGS(PJRT_Executable_Destroy) {
  TPU_PJRT_HEAD;
  PJRT_Executable* executable;
};
TPU_PJRT_ARGS(PJRT_Executable_Name) {
  TPU_PJRT_HEAD;
  PJRT_Executable* executable;
  const char* executable_name;  // out, owned by executable
  size_t executable_name_size;  // out
};
TPU_PJRT_ARGS(PJRT_Executable_NumOutputs) {
  TPU_PJRT_HEAD;
  PJRT_Executable* executable;
  size_t num_outputs;  // out
};
// Serialize writes its bytes into an object the plugin owns; the caller frees
// it once, with the deleter the plugin hands back.
TPU_PJRT_ARGS(PJRT_Executable_Serialize) {
  TPU_PJRT_HEAD;
  const PJRT_Executable* executable;
  const char* serialized_bytes;  // out, valid until the deleter runs
  size_t serialized_bytes_size;  // out
  PJRT_SerializedExecutable* serialized_executable;  // out, owns the bytes
  void (*serialized_executable_deleter)(PJRT_SerializedExecutable*);  // out
};
TPU_PJRT_ARGS(PJRT_Executable_DeserializeAndLoad) {
  TPU_PJRT_HEAD;
  PJRT_Client* client;
  const char* serialized_executable;  // bytes from PJRT_Executable_Serialize
  size_t serialized_executable_size;
  PJRT_LoadedExecutable* loaded_executable;  // out, caller destroys
  // nullptr: keep the options stored with the executable.
  const char* overridden_serialized_compile_options;
  size_t overridden_serialized_compile_options_size;
};
TPU_PJRT_ARGS(PJRT_LoadedExecutable_Destroy) {
  TPU_PJRT_HEAD;
  PJRT_LoadedExecutable* executable;
};
TPU_PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable) {
  TPU_PJRT_HEAD;
  PJRT_LoadedExecutable* loaded_executable;
  PJRT_Executable* executable;  // out, caller destroys
};
TPU_PJRT_ARGS(PJRT_LoadedExecutable_AddressableDevices) {
  TPU_PJRT_HEAD;
  PJRT_LoadedExecutable* executable;
  PJRT_Device* const* addressable_devices;  // out
  size_t num_addressable_devices;           // out
};

struct PJRT_ExecuteOptions {
  TPU_PJRT_HEAD;
  PJRT_SendCallbackInfo** send_callbacks;
  PJRT_RecvCallbackInfo** recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
  const int64_t* non_donatable_input_indices;  // since 0.39
  size_t num_non_donatable_input_indices;
  PJRT_ExecuteContext* context;  // since 0.64
  const char* call_location;     // since 0.76
  size_t num_tasks;              // since 0.78
  int* task_ids;
  int64_t* incarnation_ids;
};

TPU_PJRT_ARGS(PJRT_LoadedExecutable_Execute) {
  TPU_PJRT_HEAD;
  PJRT_LoadedExecutable* executable;
  PJRT_ExecuteOptions* options;
  PJRT_Buffer* const* const* argument_lists;  // [num_devices][num_args]
  size_t num_devices;
  size_t num_args;
  PJRT_Buffer** const* output_lists;    // [num_devices][num_outputs], out
  PJRT_Event** device_complete_events;  // [num_devices] or nullptr, out
  PJRT_Device* execute_device;          // nullptr: compile-time devices
};

TPU_PJRT_ARGS(PJRT_Buffer_Destroy) { TPU_PJRT_HEAD; PJRT_Buffer* buffer; };
TPU_PJRT_ARGS(PJRT_Buffer_ElementType) {
  TPU_PJRT_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Buffer_Type type;  // out
};
TPU_PJRT_ARGS(PJRT_Buffer_Dimensions) {
  TPU_PJRT_HEAD;
  PJRT_Buffer* buffer;
  const int64_t* dims;  // out, owned by buffer
  size_t num_dims;      // out
};
TPU_PJRT_ARGS(PJRT_Buffer_OnDeviceSizeInBytes) {
  TPU_PJRT_HEAD;
  PJRT_Buffer* buffer;
  size_t on_device_size_in_bytes;  // out
};
TPU_PJRT_ARGS(PJRT_Buffer_Device) {
  TPU_PJRT_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Device* device;  // out
};
TPU_PJRT_ARGS(PJRT_Buffer_Delete) { TPU_PJRT_HEAD; PJRT_Buffer* buffer; };
TPU_PJRT_ARGS(PJRT_Buffer_IsDeleted) {
  TPU_PJRT_HEAD;
  PJRT_Buffer* buffer;
  bool is_deleted;  // out
};
TPU_PJRT_ARGS(PJRT_Buffer_CopyToDevice) {
  TPU_PJRT_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Device* dst_device;
  PJRT_Buffer* dst_buffer;  // out, caller destroys
};
TPU_PJRT_ARGS(PJRT_Buffer_ToHostBuffer) {
  TPU_PJRT_HEAD;
  PJRT_Buffer* src;
  PJRT_Buffer_MemoryLayout* host_layout;  // nullptr: src's own layout
  void* dst;        // nullptr turns the call into a size query
  size_t dst_size;  // in/out
  PJRT_Event* event;  // out, caller destroys
};
TPU_PJRT_ARGS(PJRT_Buffer_ReadyEvent) {
  TPU_PJRT_HEAD;
  PJRT_Buffer* buffer;
  PJRT_Event* event;  // out, caller destroys
};
// While a buffer's external reference count is above zero the plugin neither
// frees nor moves its memory, so the opaque pointer stays valid.
TPU_PJRT_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount) { TPU_PJRT_HEAD; PJRT_Buffer* buffer; };
TPU_PJRT_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount) { TPU_PJRT_HEAD; PJRT_Buffer* buffer; };
TPU_PJRT_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer) {
  TPU_PJRT_HEAD;
  PJRT_Buffer* buffer;
  void* device_memory_ptr;  // out
};

#undef TPU_PJRT_HEAD
#undef TPU_PJRT_ARGS

// ----------------------------- function table -------------------------------
#define TPU_PJRT_FN(name) PJRT_Error* (*name)(name##_Args*)
#define TPU_PJRT_UNUSED(name) void* name

struct PJRT_Api {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Api_Version pjrt_api_version;

  void (*PJRT_Error_Destroy)(PJRT_Error_Destroy_Args*);
  void (*PJRT_Error_Message)(PJRT_Error_Message_Args*);
  TPU_PJRT_FN(PJRT_Error_GetCode);

  TPU_PJRT_FN(PJRT_Plugin_Initialize);
  TPU_PJRT_FN(PJRT_Plugin_Attributes);

  TPU_PJRT_FN(PJRT_Event_Destroy);
  TPU_PJRT_FN(PJRT_Event_IsReady);
  TPU_PJRT_UNUSED(PJRT_Event_Error);
  TPU_PJRT_FN(PJRT_Event_Await);
  TPU_PJRT_FN(PJRT_Event_OnReady);

  TPU_PJRT_FN(PJRT_Client_Create);
  TPU_PJRT_FN(PJRT_Client_Destroy);
  TPU_PJRT_FN(PJRT_Client_PlatformName);
  TPU_PJRT_FN(PJRT_Client_ProcessIndex);
  TPU_PJRT_FN(PJRT_Client_PlatformVersion);
  TPU_PJRT_UNUSED(PJRT_Client_Devices);
  TPU_PJRT_FN(PJRT_Client_AddressableDevices);
  TPU_PJRT_UNUSED(PJRT_Client_LookupDevice);
  TPU_PJRT_UNUSED(PJRT_Client_LookupAddressableDevice);
  TPU_PJRT_UNUSED(PJRT_Client_AddressableMemories);
  TPU_PJRT_FN(PJRT_Client_Compile);
  TPU_PJRT_UNUSED(PJRT_Client_DefaultDeviceAssignment);
  TPU_PJRT_FN(PJRT_Client_BufferFromHostBuffer);

  TPU_PJRT_FN(PJRT_DeviceDescription_Id);
  TPU_PJRT_UNUSED(PJRT_DeviceDescription_ProcessIndex);
  TPU_PJRT_UNUSED(PJRT_DeviceDescription_Attributes);
  TPU_PJRT_FN(PJRT_DeviceDescription_Kind);
  TPU_PJRT_FN(PJRT_DeviceDescription_DebugString);
  TPU_PJRT_FN(PJRT_DeviceDescription_ToString);

  TPU_PJRT_FN(PJRT_Device_GetDescription);
  TPU_PJRT_UNUSED(PJRT_Device_IsAddressable);
  TPU_PJRT_FN(PJRT_Device_LocalHardwareId);
  TPU_PJRT_UNUSED(PJRT_Device_AddressableMemories);
  TPU_PJRT_UNUSED(PJRT_Device_DefaultMemory);
  TPU_PJRT_FN(PJRT_Device_MemoryStats);

  TPU_PJRT_UNUSED(PJRT_Memory_Id);
  TPU_PJRT_UNUSED(PJRT_Memory_Kind);
  TPU_PJRT_UNUSED(PJRT_Memory_DebugString);
  TPU_PJRT_UNUSED(PJRT_Memory_ToString);
  TPU_PJRT_UNUSED(PJRT_Memory_AddressableByDevices);

  TPU_PJRT_FN(PJRT_Executable_Destroy);
  TPU_PJRT_FN(PJRT_Executable_Name);
  TPU_PJRT_UNUSED(PJRT_Executable_NumReplicas);
  TPU_PJRT_UNUSED(PJRT_Executable_NumPartitions);
  TPU_PJRT_FN(PJRT_Executable_NumOutputs);
  TPU_PJRT_UNUSED(PJRT_Executable_SizeOfGeneratedCodeInBytes);
  TPU_PJRT_UNUSED(PJRT_Executable_GetCostAnalysis);
  TPU_PJRT_UNUSED(PJRT_Executable_OutputMemoryKinds);
  TPU_PJRT_UNUSED(PJRT_Executable_OptimizedProgram);
  TPU_PJRT_FN(PJRT_Executable_Serialize);

  TPU_PJRT_FN(PJRT_LoadedExecutable_Destroy);
  TPU_PJRT_FN(PJRT_LoadedExecutable_GetExecutable);
  TPU_PJRT_FN(PJRT_LoadedExecutable_AddressableDevices);
  TPU_PJRT_UNUSED(PJRT_LoadedExecutable_Delete);
  TPU_PJRT_UNUSED(PJRT_LoadedExecutable_IsDeleted);
  TPU_PJRT_FN(PJRT_LoadedExecutable_Execute);
  TPU_PJRT_FN(PJRT_Executable_DeserializeAndLoad);
  TPU_PJRT_UNUSED(PJRT_LoadedExecutable_Fingerprint);

  TPU_PJRT_FN(PJRT_Buffer_Destroy);
  TPU_PJRT_FN(PJRT_Buffer_ElementType);
  TPU_PJRT_FN(PJRT_Buffer_Dimensions);
  TPU_PJRT_UNUSED(PJRT_Buffer_UnpaddedDimensions);
  TPU_PJRT_UNUSED(PJRT_Buffer_DynamicDimensionIndices);
  TPU_PJRT_UNUSED(PJRT_Buffer_GetMemoryLayout);
  TPU_PJRT_FN(PJRT_Buffer_OnDeviceSizeInBytes);
  TPU_PJRT_FN(PJRT_Buffer_Device);
  TPU_PJRT_UNUSED(PJRT_Buffer_Memory);
  TPU_PJRT_FN(PJRT_Buffer_Delete);
  TPU_PJRT_FN(PJRT_Buffer_IsDeleted);
  TPU_PJRT_FN(PJRT_Buffer_CopyToDevice);
  TPU_PJRT_FN(PJRT_Buffer_ToHostBuffer);
  TPU_PJRT_UNUSED(PJRT_Buffer_IsOnCpu);
  TPU_PJRT_FN(PJRT_Buffer_ReadyEvent);
  // Optional from here (checked against struct_size before use).
  TPU_PJRT_UNUSED(PJRT_Buffer_UnsafePointer);
  TPU_PJRT_FN(PJRT_Buffer_IncreaseExternalReferenceCount);
  TPU_PJRT_FN(PJRT_Buffer_DecreaseExternalReferenceCount);
  TPU_PJRT_FN(PJRT_Buffer_OpaqueDeviceMemoryDataPointer);
  // The plugin's table continues; we never read past it.
};

#undef TPU_PJRT_FN
#undef TPU_PJRT_UNUSED

}  // extern "C"

}  // namespace torch_tpu::pjrt::abi
