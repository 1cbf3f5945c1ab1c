// A loaded PJRT plugin: the shared library plus its checked function table.
//
// Versioning. The plugin reports PJRT_Api.pjrt_api_version. We require
// major == 0 and minor >= kMinApiMinor (57), the smallest minor for which
// every layout we declare (pjrt_c_abi.h, written from 0.81) is known to hold:
//  * the newest field we depend on is PJRT_ExecuteOptions'
//    non_donatable_input_indices (0.39); every function we call is in the
//    part of the table that predates the header's "append new entries at the
//    end" section (0.29);
//  * but the upstream changelog lists layout changes after that: 0.45
//    changed PJRT_Extension_Base, and 0.57 "rearranged fields in the
//    PJRT_Api" right after 0.56 added an entry. From 0.57 on every change is
//    an append, which older-layout structs and our larger ones tolerate.
// Plugins accept our larger (0.81) args structs. A plugin newer than 0.81
// may require larger structs than we send (PJRT_ExecuteOptions grew in 0.97)
// and then fails that call with INVALID_ARGUMENT "Unexpected ... size"; this
// surfaces as Error at the call, not at load.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace torch_tpu::pjrt {

namespace abi {
struct PJRT_Api;
}

class Api {
 public:
  static constexpr int kRequiredApiMajor = 0;
  static constexpr int kMinApiMinor = 57;

  // dlopens `path` (RTLD_NOW | RTLD_LOCAL), validates the table and calls
  // PJRT_Plugin_Initialize. Loading the same file again returns the same Api:
  // a plugin is initialized once per process and never unloaded (plugins do
  // not support dlclose). Throws Error on any failure.
  static std::shared_ptr<Api> load(const std::string& path);

  // What load() does once it holds the plugin's function table: validate
  // size, version and required entries, then PJRT_Plugin_Initialize.
  // `origin` names the plugin in messages. Exposed for tests and for
  // plugins linked in statically; `table` must outlive the Api.
  static std::shared_ptr<Api> from_table(const abi::PJRT_Api* table,
                                         const std::string& origin);

  const abi::PJRT_Api* raw() const { return api_; }
  const std::string& path() const { return path_; }
  int api_major() const;
  int api_minor() const;

  // The plugin's self-description (e.g. xla_version,
  // stablehlo_current_version), values rendered as strings. Empty when the
  // plugin does not implement PJRT_Plugin_Attributes.
  std::vector<std::pair<std::string, std::string>> plugin_attributes() const;

 private:
  Api(const abi::PJRT_Api* api, std::string path)
      : api_(api), path_(std::move(path)) {}

  const abi::PJRT_Api* api_;  // static data inside the plugin
  std::string path_;
};

}  // namespace torch_tpu::pjrt
