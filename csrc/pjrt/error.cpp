#include "pjrt/error.h"

#include <cstdio>

#include "pjrt/pjrt_c_abi_sizes.h"

namespace torch_tpu::pjrt {

std::string error_code_name(int code) {
  // Indexed by code; the absl status code numbering.
  static const char* const kNames[] = {
      "OK",                 "CANCELLED",          "UNKNOWN",
      "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",  "NOT_FOUND",
      "ALREADY_EXISTS",     "PERMISSION_DENIED",  "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION", "ABORTED",           "OUT_OF_RANGE",
      "UNIMPLEMENTED",      "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS",          "UNAUTHENTICATED"};
  if (code >= 0 && code < static_cast<int>(sizeof(kNames) / sizeof(*kNames))) {
    return kNames[code];
  }
  return "CODE_" + std::to_string(code);
}

Error::Error(int code, const std::string& message)
    : std::runtime_error(error_code_name(code) + ": " + message),
      code_(code),
      message_(message) {}

namespace {

// Reads code and message out of `error`, then destroys it. The message
// storage belongs to `error`, so it is copied before the destroy.
Error take(const abi::PJRT_Api* api, abi::PJRT_Error* error,
           const char* context) {
  auto code_args = abi::make<abi::PJRT_Error_GetCode_Args>();
  code_args.error = error;
  int code = kUnknown;
  if (abi::PJRT_Error* code_error = api->PJRT_Error_GetCode(&code_args)) {
    // Nested failure: nothing sensible to report but "unknown".
    auto destroy = abi::make<abi::PJRT_Error_Destroy_Args>();
    destroy.error = code_error;
    api->PJRT_Error_Destroy(&destroy);
  } else {
    code = code_args.code;
  }

  auto message_args = abi::make<abi::PJRT_Error_Message_Args>();
  message_args.error = error;
  api->PJRT_Error_Message(&message_args);
  std::string message(message_args.message ? message_args.message : "",
                      message_args.message ? message_args.message_size : 0);

  auto destroy = abi::make<abi::PJRT_Error_Destroy_Args>();
  destroy.error = error;
  api->PJRT_Error_Destroy(&destroy);

  return Error(code, std::string(context) + ": " + message);
}

}  // namespace

void check(const abi::PJRT_Api* api, abi::PJRT_Error* error,
           const char* context) {
  if (error != nullptr) throw take(api, error, context);
}

void check_noexcept(const abi::PJRT_Api* api, abi::PJRT_Error* error,
                    const char* context) noexcept {
  if (error == nullptr) return;
  try {
    Error e = take(api, error, context);
    std::fprintf(stderr, "torch_tpu: ignoring PJRT error in cleanup: %s\n",
                 e.what());
  } catch (...) {
    // Allocation failure while formatting; the PJRT_Error is already freed.
  }
}

}  // namespace torch_tpu::pjrt
