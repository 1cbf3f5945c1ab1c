// Error type of the PJRT layer: every failure reported by the plugin (and
// every misuse we detect ourselves) surfaces as torch_tpu::pjrt::Error.
#pragma once

#include <stdexcept>
#include <string>

namespace torch_tpu::pjrt {

namespace abi {
struct PJRT_Api;
struct PJRT_Error;
}  // namespace abi

// PJRT error codes (the absl status code numbering used by the C API).
enum ErrorCode : int {
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "INVALID_ARGUMENT" etc.; "CODE_<n>" for numbers outside the table.
std::string error_code_name(int code);

class Error : public std::runtime_error {
 public:
  // what() becomes "<CODE_NAME>: <message>".
  Error(int code, const std::string& message);
  int code() const { return code_; }
  // The message without the code prefix.
  const std::string& message() const { return message_; }

 private:
  int code_;
  std::string message_;
};

// Takes ownership of `error` (may be nullptr): destroys it and, when it is
// set, throws Error carrying the plugin's code and message prefixed by
// `context` (e.g. "PJRT_Client_Compile").
void check(const abi::PJRT_Api* api, abi::PJRT_Error* error,
           const char* context);

// For destructors: destroys `error` and logs it to stderr if set.
void check_noexcept(const abi::PJRT_Api* api, abi::PJRT_Error* error,
                    const char* context) noexcept;

}  // namespace torch_tpu::pjrt
