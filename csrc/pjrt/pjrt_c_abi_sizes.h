// struct_size values for the structs we pass to the plugin, a builder that
// fills them in, and the layout facts of pjrt_c_abi.h checked at compile
// time (LP64; numbers from the 0.81 ABI).
#pragma once

#include <cstddef>
#include <cstring>

#include "pjrt/pjrt_c_abi.h"

namespace torch_tpu::pjrt::abi {

// struct_size as the ABI defines it: end of the last declared field (no tail
// padding). Specialised below for every struct we hand to the plugin.
template <typename T>
struct StructSize;

#define TPU_PJRT_STRUCT_SIZE(type, last_field)                      \
  template <>                                                       \
  struct StructSize<type> {                                         \
    static constexpr size_t value =                                 \
        offsetof(type, last_field) + sizeof(type::last_field);      \
  }

TPU_PJRT_STRUCT_SIZE(PJRT_NamedValue, value_size);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_MemoryLayout_Tiled, num_tiles);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_MemoryLayout, type);
TPU_PJRT_STRUCT_SIZE(PJRT_Program, format_size);
TPU_PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, incarnation_ids);
TPU_PJRT_STRUCT_SIZE(PJRT_Error_Destroy_Args, error);
TPU_PJRT_STRUCT_SIZE(PJRT_Error_Message_Args, message_size);
TPU_PJRT_STRUCT_SIZE(PJRT_Error_GetCode_Args, code);
TPU_PJRT_STRUCT_SIZE(PJRT_Plugin_Initialize_Args, extension_start);
TPU_PJRT_STRUCT_SIZE(PJRT_Plugin_Attributes_Args, num_attributes);
TPU_PJRT_STRUCT_SIZE(PJRT_Event_Destroy_Args, event);
TPU_PJRT_STRUCT_SIZE(PJRT_Event_IsReady_Args, is_ready);
TPU_PJRT_STRUCT_SIZE(PJRT_Event_Await_Args, event);
TPU_PJRT_STRUCT_SIZE(PJRT_Event_OnReady_Args, user_arg);
TPU_PJRT_STRUCT_SIZE(PJRT_Client_Create_Args, kv_try_get_user_arg);
TPU_PJRT_STRUCT_SIZE(PJRT_Client_Destroy_Args, client);
TPU_PJRT_STRUCT_SIZE(PJRT_Client_PlatformName_Args, platform_name_size);
TPU_PJRT_STRUCT_SIZE(PJRT_Client_ProcessIndex_Args, process_index);
TPU_PJRT_STRUCT_SIZE(PJRT_Client_PlatformVersion_Args, platform_version_size);
TPU_PJRT_STRUCT_SIZE(PJRT_Client_AddressableDevices_Args,
                     num_addressable_devices);
TPU_PJRT_STRUCT_SIZE(PJRT_Client_Compile_Args, executable);
TPU_PJRT_STRUCT_SIZE(PJRT_Client_BufferFromHostBuffer_Args, buffer);
TPU_PJRT_STRUCT_SIZE(PJRT_DeviceDescription_Id_Args, id);
TPU_PJRT_STRUCT_SIZE(PJRT_DeviceDescription_Kind_Args, device_kind_size);
TPU_PJRT_STRUCT_SIZE(PJRT_DeviceDescription_DebugString_Args,
                     debug_string_size);
TPU_PJRT_STRUCT_SIZE(PJRT_DeviceDescription_ToString_Args, to_string_size);
TPU_PJRT_STRUCT_SIZE(PJRT_Device_GetDescription_Args, device_description);
TPU_PJRT_STRUCT_SIZE(PJRT_Device_LocalHardwareId_Args, local_hardware_id);
TPU_PJRT_STRUCT_SIZE(PJRT_Device_MemoryStats_Args, peak_pool_bytes_is_set);
TPU_PJRT_STRUCT_SIZE(PJRT_Executable_Destroy_Args, executable);
TPU_PJRT_STRUCT_SIZE(PJRT_Executable_Name_Args, executable_name_size);
TPU_PJRT_STRUCT_SIZE(PJRT_Executable_NumOutputs_Args, num_outputs);
TPU_PJRT_STRUCT_SIZE(PJRT_Executable_Serialize_Args,
                     serialized_executable_deleter);
TPU_PJRT_STRUCT_SIZE(PJRT_Executable_DeserializeAndLoad_Args,
                     overridden_serialized_compile_options_size);
TPU_PJRT_STRUCT_SIZE(PJRT_LoadedExecutable_Destroy_Args, executable);
TPU_PJRT_STRUCT_SIZE(PJRT_LoadedExecutable_GetExecutable_Args, executable);
TPU_PJRT_STRUCT_SIZE(PJRT_LoadedExecutable_AddressableDevices_Args,
                     num_addressable_devices);
TPU_PJRT_STRUCT_SIZE(PJRT_LoadedExecutable_Execute_Args, execute_device);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_Destroy_Args, buffer);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_ElementType_Args, type);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_Dimensions_Args, num_dims);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_OnDeviceSizeInBytes_Args,
                     on_device_size_in_bytes);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_Device_Args, device);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_Delete_Args, buffer);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_IsDeleted_Args, is_deleted);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_CopyToDevice_Args, dst_buffer);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_ToHostBuffer_Args, event);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_ReadyEvent_Args, event);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_IncreaseExternalReferenceCount_Args, buffer);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_DecreaseExternalReferenceCount_Args, buffer);
TPU_PJRT_STRUCT_SIZE(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, device_memory_ptr);
#undef TPU_PJRT_STRUCT_SIZE

// A zero-filled struct with struct_size set: every pointer we do not set is
// nullptr, which the ABI reads as "not provided".
template <typename T>
T make() {
  T value;
  std::memset(static_cast<void*>(&value), 0, sizeof(T));
  value.struct_size = StructSize<T>::value;
  return value;
}

// End of a PJRT_Api entry: the table's struct_size must reach it before the
// entry may be read.
#define TPU_PJRT_API_ENTRY_END(field)                           \
  (offsetof(::torch_tpu::pjrt::abi::PJRT_Api, field) +          \
   sizeof(::torch_tpu::pjrt::abi::PJRT_Api::field))

// ----------------------- layout facts we rely on (LP64) ----------------------
// Cross-checked against the 0.81 ABI; a mismatch here means a declaration
// above drifted from the plugin's layout.
static_assert(sizeof(void*) == 8 && sizeof(size_t) == 8, "LP64 only");
static_assert(offsetof(PJRT_Api, pjrt_api_version) == 16, "PJRT_Api head");
static_assert(offsetof(PJRT_Api, PJRT_Error_Destroy) == 40, "PJRT_Api table");
static_assert(offsetof(PJRT_Api, PJRT_LoadedExecutable_AddressableDevices) ==
                  456, "PJRT_Api table order");
static_assert(offsetof(PJRT_Api, PJRT_Buffer_ReadyEvent) == 616,
              "PJRT_Api table order");
static_assert(offsetof(PJRT_Api, PJRT_Buffer_OpaqueDeviceMemoryDataPointer) == 648,
              "PJRT_Api table order");
static_assert(StructSize<PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>::value == 32,
              "OpaqueDeviceMemoryDataPointer");
static_assert(StructSize<PJRT_NamedValue>::value == 56, "NamedValue");
static_assert(offsetof(PJRT_NamedValue, int64_value) == 40, "NamedValue");
static_assert(StructSize<PJRT_Client_Create_Args>::value == 88, "Create");
static_assert(StructSize<PJRT_ExecuteOptions>::value == 112, "ExecOptions");
static_assert(offsetof(PJRT_ExecuteOptions, non_donatable_input_indices) ==
                  56, "ExecuteOptions");
static_assert(StructSize<PJRT_LoadedExecutable_Execute_Args>::value == 80,
              "Execute");
static_assert(StructSize<PJRT_Client_BufferFromHostBuffer_Args>::value == 120,
              "BufferFromHostBuffer");
static_assert(StructSize<PJRT_Device_MemoryStats_Args>::value == 185,
              "MemoryStats");
static_assert(offsetof(PJRT_Device_MemoryStats_Args, bytes_limit) == 80,
              "MemoryStats");
static_assert(StructSize<PJRT_Buffer_MemoryLayout>::value == 76, "Layout");
static_assert(offsetof(PJRT_Buffer_MemoryLayout, type) == 72, "Layout");
static_assert(StructSize<PJRT_Buffer_ToHostBuffer_Args>::value == 56,
              "ToHostBuffer");
static_assert(StructSize<PJRT_Client_Compile_Args>::value == 56, "Compile");
static_assert(StructSize<PJRT_Program>::value == 48, "Program");
static_assert(StructSize<PJRT_Executable_Serialize_Args>::value == 56,
              "Serialize");
static_assert(StructSize<PJRT_Executable_DeserializeAndLoad_Args>::value == 64,
              "DeserializeAndLoad");
static_assert(offsetof(PJRT_Api, PJRT_Executable_Serialize) == 432,
              "PJRT_Api table order");
static_assert(offsetof(PJRT_Api, PJRT_Executable_DeserializeAndLoad) == 488,
              "PJRT_Api table order");

}  // namespace torch_tpu::pjrt::abi
