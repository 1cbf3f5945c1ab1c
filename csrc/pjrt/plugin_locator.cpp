#include "pjrt/plugin_locator.h"

#include <sys/stat.h>

#include <cstdlib>

#include "pjrt/error.h"

namespace torch_tpu::pjrt {
namespace {

constexpr const char* kInstallHelp =
    "Install a PJRT plugin: `pip install xla-cpu-pjrt` for the CPU backend, "
    "`pip install libtpu` on a TPU VM, or set TORCH_TPU_PJRT_PLUGIN to the "
    "path of a PJRT plugin .so.";

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string join(const std::string& dir, const char* tail) {
  if (dir.empty()) return tail;  // sys.path's "" means the current directory
  return dir.back() == '/' ? dir + tail : dir + "/" + tail;
}

// First `<dir>/<tail>` that is a regular file, or "".
std::string find_in(const std::vector<std::string>& dirs, const char* tail) {
  for (const std::string& dir : dirs) {
    std::string candidate = join(dir, tail);
    if (is_file(candidate)) return candidate;
  }
  return "";
}

}  // namespace

bool tpu_device_present() {
  return exists("/dev/accel0") || exists("/dev/vfio/0");
}

std::string locate_plugin(const std::vector<std::string>& search_dirs) {
  const char* env = std::getenv(kPluginEnvVar);
  if (env != nullptr && env[0] != '\0') {
    if (!is_file(env)) {
      throw Error(kNotFound, std::string(kPluginEnvVar) + "=" + env +
                                 " does not name an existing file. " +
                                 kInstallHelp);
    }
    return env;
  }
  if (tpu_device_present()) {
    std::string libtpu = find_in(search_dirs, "libtpu/libtpu.so");
    if (!libtpu.empty()) return libtpu;
  }
  std::string cpu = find_in(search_dirs, "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
  if (!cpu.empty()) return cpu;

  std::string searched;
  for (const std::string& dir : search_dirs) {
    searched += searched.empty() ? "" : ", ";
    searched += dir.empty() ? "." : dir;
  }
  throw Error(kNotFound,
              std::string("no PJRT plugin found") +
                  (tpu_device_present() ? " (TPU present, libtpu missing)"
                                        : "") +
                  " in [" + searched + "]. " + kInstallHelp);
}

}  // namespace torch_tpu::pjrt
