#include "pjrt/ffi_extension.h"

#include <cstddef>

#include "pjrt/api.h"
#include "pjrt/error.h"
#include "pjrt/pjrt_c_abi.h"

namespace torch_tpu::pjrt {
namespace {

// Our declarations of the PJRT FFI extension (PJRT_Extension_Type_FFI, the
// sixth extension type). Two layouts of the registration args exist: the
// first typed-FFI one carried an `int api_version` after the target name;
// later ones dropped it (typed handlers only). A plugin checks
// struct_size >= the size it knows, so we send the newer, smaller struct first:
// an older plugin rejects it by size and we retry with the older layout. Sending
// the older one first would be read with the wrong field offsets by a newer plugin.
constexpr int kExtensionTypeFfi = 5;

struct RegisterHandlerArgs {  // newer layout
  size_t struct_size;
  const char* target_name;
  size_t target_name_size;
  void* handler;
  const char* platform_name;
  size_t platform_name_size;
  uint32_t traits;
};

struct RegisterHandlerArgsWithVersion {  // older layout
  size_t struct_size;
  const char* target_name;
  size_t target_name_size;
  int api_version;  // 1: typed FFI
  void* handler;
  const char* platform_name;
  size_t platform_name_size;
  uint32_t traits;
};

using RegisterHandlerFn = abi::PJRT_Error* (*)(void* args);

struct FfiExtension {
  abi::PJRT_Extension_Base base;
  void* type_register;
  void* user_data_add;
  RegisterHandlerFn register_handler;
};

template <typename T>
constexpr size_t size_through_traits() {
  return offsetof(T, traits) + sizeof(uint32_t);
}
static_assert(size_through_traits<RegisterHandlerArgs>() == 52);
static_assert(size_through_traits<RegisterHandlerArgsWithVersion>() == 60);
static_assert(offsetof(FfiExtension, register_handler) == 40);

const FfiExtension* find_ffi_extension(const abi::PJRT_Api* api) {
  for (const abi::PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next) {
    if (e->type == kExtensionTypeFfi && e->struct_size >= offsetof(FfiExtension, register_handler) + sizeof(void*))
      return reinterpret_cast<const FfiExtension*>(e);
  }
  return nullptr;
}

// The plugin's error message (destroying the error), "" for none.
std::string message_of(const abi::PJRT_Api* api, abi::PJRT_Error* error) {
  if (error == nullptr) return "";
  try {
    check(api, error, "PJRT FFI register_handler");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

std::string register_ffi_handler(const Api& api, const std::string& target, void* handler,
                                 const std::string& platform) {
  const abi::PJRT_Api* raw = api.raw();
  const FfiExtension* ext = find_ffi_extension(raw);
  if (ext == nullptr || ext->register_handler == nullptr) return "the plugin has no PJRT FFI extension";
  RegisterHandlerArgs args{size_through_traits<RegisterHandlerArgs>(), target.data(), target.size(), handler,
                           platform.data(), platform.size(), 0};
  std::string why = message_of(raw, ext->register_handler(&args));
  if (why.empty() || why.find("size") == std::string::npos) return why;
  RegisterHandlerArgsWithVersion old{size_through_traits<RegisterHandlerArgsWithVersion>(), target.data(),
                                     target.size(), 1, handler, platform.data(), platform.size(), 0};
  return message_of(raw, ext->register_handler(&old));
}

}  // namespace torch_tpu::pjrt
