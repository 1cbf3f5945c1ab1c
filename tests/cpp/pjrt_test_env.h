// Shared setup for the PJRT layer tests: the plugin comes from
// $TORCH_TPU_PJRT_PLUGIN (e.g. site-packages/xla_plugins/xla_cpu_pjrt/
// xla_cpu_pjrt.so); tests that need it fail when it is unset (scripts/test.sh
// sets it), so a misconfigured run cannot pass by skipping.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "pjrt/pjrt.h"

namespace torch_tpu::pjrt::testing {

inline std::string plugin_path() {
  const char* path = std::getenv(kPluginEnvVar);
  return path ? path : "";
}

#define TPU_PJRT_REQUIRE_PLUGIN()                                         \
  do {                                                                    \
    if (::torch_tpu::pjrt::testing::plugin_path().empty()) {              \
      FAIL() << "set TORCH_TPU_PJRT_PLUGIN to a PJRT plugin .so";         \
    }                                                                     \
  } while (0)

// A two-device CPU client shared by the tests. Deliberately never destroyed:
// tearing a client down during static destruction races the plugin's own
// teardown. Tests that check destruction make their own clients.
inline std::shared_ptr<Client> shared_client() {
  static auto* client = new std::shared_ptr<Client>(Client::create(
      Api::load(plugin_path()), ClientOptions{/*cpu_device_count=*/2}));
  return *client;
}

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void set(const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace torch_tpu::pjrt::testing
