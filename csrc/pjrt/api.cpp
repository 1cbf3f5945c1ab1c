#include "pjrt/api.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <map>
#include <mutex>
#include <sstream>

#include "pjrt/error.h"
#include "pjrt/pjrt_c_abi_sizes.h"

namespace torch_tpu::pjrt {
namespace {

using abi::PJRT_Api;

std::string version_string(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// Validates the table before anything in it is called. Order matters: the
// version may only be read once struct_size covers it.
void validate(const PJRT_Api* api, const std::string& path) {
  const std::string where = " (plugin " + path + ")";
  if (api->struct_size < TPU_PJRT_API_ENTRY_END(pjrt_api_version)) {
    throw Error(kFailedPrecondition,
                "PJRT_Api table too small to hold a version (" +
                    std::to_string(api->struct_size) + " bytes)" + where);
  }
  const int major = api->pjrt_api_version.major_version;
  const int minor = api->pjrt_api_version.minor_version;
  if (major != Api::kRequiredApiMajor || minor < Api::kMinApiMinor) {
    throw Error(kFailedPrecondition,
                "unsupported PJRT C API version " +
                    version_string(major, minor) + "; torch_tpu needs " +
                    version_string(Api::kRequiredApiMajor, Api::kMinApiMinor) +
                    " or a later 0.x" + where +
                    ". Install a newer plugin (pip install -U xla-cpu-pjrt "
                    "or libtpu).");
  }
  const size_t needed = TPU_PJRT_API_ENTRY_END(PJRT_Buffer_ReadyEvent);
  if (api->struct_size < needed) {
    throw Error(kFailedPrecondition,
                "PJRT_Api table has " + std::to_string(api->struct_size) +
                    " bytes, torch_tpu needs " + std::to_string(needed) +
                    " (reported version " + version_string(major, minor) +
                    ")" + where);
  }

  // Entries every code path relies on. PJRT_Plugin_Initialize,
  // PJRT_Plugin_Attributes and PJRT_Device_MemoryStats are optional.
  struct Entry {
    const void* fn;
    const char* name;
  };
#define TPU_ENTRY(name) Entry{reinterpret_cast<const void*>(api->name), #name}
  const Entry required[] = {
      TPU_ENTRY(PJRT_Error_Destroy),
      TPU_ENTRY(PJRT_Error_Message),
      TPU_ENTRY(PJRT_Error_GetCode),
      TPU_ENTRY(PJRT_Event_Destroy),
      TPU_ENTRY(PJRT_Event_IsReady),
      TPU_ENTRY(PJRT_Event_Await),
      TPU_ENTRY(PJRT_Event_OnReady),
      TPU_ENTRY(PJRT_Client_Create),
      TPU_ENTRY(PJRT_Client_Destroy),
      TPU_ENTRY(PJRT_Client_PlatformName),
      TPU_ENTRY(PJRT_Client_ProcessIndex),
      TPU_ENTRY(PJRT_Client_PlatformVersion),
      TPU_ENTRY(PJRT_Client_AddressableDevices),
      TPU_ENTRY(PJRT_Client_Compile),
      TPU_ENTRY(PJRT_Client_BufferFromHostBuffer),
      TPU_ENTRY(PJRT_DeviceDescription_Id),
      TPU_ENTRY(PJRT_DeviceDescription_Kind),
      TPU_ENTRY(PJRT_DeviceDescription_DebugString),
      TPU_ENTRY(PJRT_DeviceDescription_ToString),
      TPU_ENTRY(PJRT_Device_GetDescription),
      TPU_ENTRY(PJRT_Device_LocalHardwareId),
      TPU_ENTRY(PJRT_Executable_Destroy),
      TPU_ENTRY(PJRT_Executable_Name),
      TPU_ENTRY(PJRT_Executable_NumOutputs),
      TPU_ENTRY(PJRT_LoadedExecutable_Destroy),
      TPU_ENTRY(PJRT_LoadedExecutable_GetExecutable),
      TPU_ENTRY(PJRT_LoadedExecutable_AddressableDevices),
      TPU_ENTRY(PJRT_LoadedExecutable_Execute),
      TPU_ENTRY(PJRT_Buffer_Destroy),
      TPU_ENTRY(PJRT_Buffer_ElementType),
      TPU_ENTRY(PJRT_Buffer_Dimensions),
      TPU_ENTRY(PJRT_Buffer_OnDeviceSizeInBytes),
      TPU_ENTRY(PJRT_Buffer_Device),
      TPU_ENTRY(PJRT_Buffer_Delete),
      TPU_ENTRY(PJRT_Buffer_IsDeleted),
      TPU_ENTRY(PJRT_Buffer_CopyToDevice),
      TPU_ENTRY(PJRT_Buffer_ToHostBuffer),
      TPU_ENTRY(PJRT_Buffer_ReadyEvent),
  };
#undef TPU_ENTRY
  for (const Entry& entry : required) {
    if (entry.fn == nullptr) {
      throw Error(kUnimplemented, std::string("plugin does not implement ") +
                                      entry.name + where);
    }
  }
}

std::string render(const abi::PJRT_NamedValue& value) {
  switch (value.type) {
    case abi::PJRT_NamedValue_kString:
      return std::string(value.string_value, value.value_size);
    case abi::PJRT_NamedValue_kInt64:
      return std::to_string(value.int64_value);
    case abi::PJRT_NamedValue_kInt64List: {
      std::string out = "[";
      for (size_t i = 0; i < value.value_size; ++i) {
        out += (i ? ", " : "") + std::to_string(value.int64_array_value[i]);
      }
      return out + "]";
    }
    case abi::PJRT_NamedValue_kFloat: {
      std::ostringstream out;
      out << value.float_value;
      return out.str();
    }
    case abi::PJRT_NamedValue_kBool:
      return value.bool_value ? "true" : "false";
  }
  return "<type " + std::to_string(static_cast<int>(value.type)) + ">";
}

}  // namespace

std::shared_ptr<Api> Api::load(const std::string& path) {
  // One Api per file: keyed by the resolved path so symlinks share it.
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Api>> loaded;

  char resolved[PATH_MAX];
  const std::string key =
      ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;

  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw Error(kNotFound, "cannot load PJRT plugin " + path + ": " +
                               (why ? why : "unknown dlopen error"));
  }
  // From here on the library stays loaded even on failure: dlclose on a
  // PJRT plugin is unsupported (it registers process-wide state).
  using GetApiFn = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetApiFn>(::dlsym(handle, "GetPjrtApi"));
  if (get_api == nullptr) {
    throw Error(kNotFound, "PJRT plugin " + path +
                               " does not export GetPjrtApi; not a PJRT "
                               "plugin?");
  }
  const PJRT_Api* api = get_api();
  if (api == nullptr) {
    throw Error(kInternal, "GetPjrtApi returned null in " + path);
  }
  auto result = from_table(api, path);
  loaded.emplace(key, result);
  return result;
}

std::shared_ptr<Api> Api::from_table(const abi::PJRT_Api* table,
                                     const std::string& origin) {
  if (table == nullptr) {
    throw Error(kInvalidArgument, "null PJRT_Api table for " + origin);
  }
  validate(table, origin);
  if (table->PJRT_Plugin_Initialize != nullptr) {
    auto args = abi::make<abi::PJRT_Plugin_Initialize_Args>();
    check(table, table->PJRT_Plugin_Initialize(&args),
          "PJRT_Plugin_Initialize");
  }
  return std::shared_ptr<Api>(new Api(table, origin));
}

int Api::api_major() const { return api_->pjrt_api_version.major_version; }
int Api::api_minor() const { return api_->pjrt_api_version.minor_version; }

std::vector<std::pair<std::string, std::string>> Api::plugin_attributes()
    const {
  std::vector<std::pair<std::string, std::string>> out;
  if (api_->PJRT_Plugin_Attributes == nullptr) return out;
  auto args = abi::make<abi::PJRT_Plugin_Attributes_Args>();
  check(api_, api_->PJRT_Plugin_Attributes(&args), "PJRT_Plugin_Attributes");
  for (size_t i = 0; i < args.num_attributes; ++i) {
    const abi::PJRT_NamedValue& value = args.attributes[i];
    out.emplace_back(std::string(value.name, value.name_size), render(value));
  }
  return out;
}

}  // namespace torch_tpu::pjrt
