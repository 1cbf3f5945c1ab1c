// torch_tpu._C: the Python face of the runtime, executor and metrics.
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include <fstream>
#include <sstream>

#include "compile_cache/compile_cache.h"
#include "compile_cache/program_dump.h"
#include "device/allocator.h"
#include "device/generator.h"
#include "device/host_kernel_setup.h"
#include "device/runtime.h"
#include "device/storage_slot.h"
#include "eager/boxed_kernel.h"
#include "eager/cache_key_fields.h"
#include "eager/cache_validation.h"
#include "eager/fused/window.h"
#include "eager/metrics.h"
#include "eager/out_meta_memo.h"
#include "eager/float64_rule.h"
#include "eager/tpu_type_check.h"
#include "ops/registry.h"
#include "pjrt/api.h"
#include "pjrt/buffer.h"
#include "pjrt/fault_injection.h"
#include "python/distributed_bindings.h"
#include "python/graph_bindings.h"
#include "python/module_call_bindings.h"

namespace py = pybind11;
using namespace torch_tpu;

namespace {

py::dict runtime_info() {
  device::Runtime& rt = device::runtime();
  py::dict info;
  info["plugin_path"] = rt.plugin_path;
  info["platform_name"] = rt.client->platform_name();
  info["platform_version"] = rt.client->platform_version();
  info["pjrt_api_version"] = py::make_tuple(rt.api->api_major(), rt.api->api_minor());
  py::list devices;
  for (const pjrt::Device& d : rt.devices) {
    py::dict dd;
    dd["id"] = d.id();
    dd["kind"] = d.kind();
    dd["description"] = d.to_string();
    devices.append(dd);
  }
  info["devices"] = devices;
  return info;
}

py::tuple mem_get_info(int index) {
  auto [free, total] = device::memory_info(index);
  return py::make_tuple(free, total);
}

py::dict metrics() {
  eager::Metrics m = eager::metrics_snapshot();
  py::dict d;
  d["compiles"] = m.compiles;
  d["cache_hits"] = m.cache_hits;
  d["cache_evictions"] = m.cache_evictions;
  d["executions"] = m.executions;
  d["compile_seconds"] = m.compile_seconds;
  d["host_to_device_bytes"] = m.host_to_device_bytes;
  d["live_device_buffers"] = pjrt::Buffer::live_count();
  d["device_to_host_bytes"] = m.device_to_host_bytes;
  d["compiles_by_op"] = m.compiles_by_op;
  d["fallbacks_by_op"] = m.fallbacks_by_op;
  int64_t fallbacks = 0;
  for (const auto& kv : m.fallbacks_by_op) fallbacks += kv.second;
  d["fallbacks"] = fallbacks;
  compile_cache::Stats disk = compile_cache::stats();  // the persistent cache behind memory misses
  d["disk_cache_hits"] = disk.hits;
  d["disk_cache_misses"] = disk.misses;
  d["disk_cache_waits"] = disk.waits;
  d["disk_cache_writes"] = disk.writes;
  d["disk_cache_errors"] = disk.errors;
  d["disk_cache_evictions"] = disk.evictions;
  d["disk_cache_load_seconds"] = disk.load_seconds;
  eager::fused::Counters fused = eager::fused::counters();  // TORCH_TPU_EAGER_MODE=fused
  d["fused_windows"] = fused.windows;
  d["fused_ops"] = fused.ops;
  d["fused_compiles"] = fused.compiles;
  d["cache_validations"] = eager::cache_validations();  // TORCH_TPU_VALIDATE_CACHE=1: hits checked
  d["out_meta_memo_hits"] = eager::out_meta_memo_hits();  // out= calls that skipped their meta kernel
  return d;
}

// torch's names for the float32 matmul precisions.
const char* precision_name(ops::MatmulPrecision p) {
  return p == ops::MatmulPrecision::High ? "high" : p == ops::MatmulPrecision::Medium ? "medium" : "highest";
}

std::optional<ops::MatmulPrecision> precision_of(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  if (*name == "highest") return ops::MatmulPrecision::Highest;
  if (*name == "high") return ops::MatmulPrecision::High;
  if (*name == "medium") return ops::MatmulPrecision::Medium;
  TORCH_CHECK_VALUE(false, "torch_tpu: unknown matmul precision '", *name, "' (expected highest, high or medium)");
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_tpu native core";
  m.def("_set_plugin_search_dirs", &device::set_plugin_search_dirs);
  m.def("_register_ops", &eager::register_lowered_ops);
  m.def("_lowered_ops", &ops::lowered_ops);
  m.def("_runtime_info", &runtime_info);
  m.def("_runtime_started", &device::runtime_initialized);
  m.def("_plugin_path", &device::plugin_path);
  m.def("_is_in_bad_fork", &device::in_bad_fork);
  m.def("_start_runtime", []() { device::runtime(); });
  m.def("device_count", &device::device_count);
  m.def("current_device", &device::current_device);
  m.def("set_device", &device::set_current_device);
  m.def("synchronize", &device::synchronize, py::arg("device") = -1, py::call_guard<py::gil_scoped_release>());
  m.def("set_debug_mode", &device::set_debug_mode);
  // 0 strict, 1 debug, 2 fused (torch_tpu/modes.py names them).
  m.def("_eager_mode", [] { return static_cast<int>(device::eager_mode()); });
  m.def("_set_eager_mode", [](int m) {
    TORCH_CHECK_VALUE(m >= 0 && m <= 2, "unknown eager mode ", m);
    device::set_eager_mode(static_cast<device::EagerMode>(m));
  }, py::call_guard<py::gil_scoped_release>());
  m.def("_flush_fused_window", &eager::fused::flush, py::call_guard<py::gil_scoped_release>());
  // torch.tpu.precision(): the effective float32 matmul precision and this
  // thread's override of torch.set_float32_matmul_precision.
  m.def("_matmul_precision", [] { return std::string(precision_name(eager::matmul_precision())); });
  m.def("_precision_override", []() -> std::optional<std::string> {
    auto p = eager::matmul_precision_override();
    if (!p) return std::nullopt;
    return std::string(precision_name(*p));
  });
  m.def("_set_precision_override", [](const std::optional<std::string>& name) {
    eager::set_matmul_precision_override(precision_of(name));
  });
  // Test-only (tests/reliability/test_faults.py): the next `count` operations
  // at `site` fail as a failing plugin or device would.
  m.def("_inject_faults", [](const std::string& site, int count) {
    static const std::map<std::string, pjrt::FaultSite> sites = {
        {"compile", pjrt::FaultSite::Compile}, {"execute", pjrt::FaultSite::Execute},
        {"host_to_device", pjrt::FaultSite::HostToDevice}, {"device_to_host", pjrt::FaultSite::DeviceToHost}};
    auto it = sites.find(site);
    TORCH_CHECK_VALUE(it != sites.end(), "_inject_faults: unknown site '", site,
                      "' (compile, execute, host_to_device, device_to_host)");
    pjrt::inject_faults(it->second, count);
  });
  m.def("debug_mode", &device::debug_mode);
  m.def("memory_allocated", [](int i) { return device::memory_stats(i).allocated; });
  m.def("max_memory_allocated", [](int i) { return device::memory_stats(i).peak_allocated; });
  m.def("reset_peak_memory_stats", &device::reset_peak_memory_stats);
  m.def("mem_get_info", &mem_get_info);
  m.def("metrics", &metrics);
  m.def("reset_metrics", []() {
    eager::reset_metrics();
    eager::fused::reset_counters();
    compile_cache::reset_stats();
  });
  m.def("_compile_cache_dir", &compile_cache::active_dir);
  m.def("_set_program_dump_dir", &compile_cache::set_program_dump_dir);
  m.def("_set_tpu_type_check", &eager::set_tpu_type_check);  // TORCH_TPU_CHECK_TPU_TYPES, for tests
  // The float64 rule of a TPU platform on any plugin (TORCH_TPU_PLATFORM_STANDIN=tpu), for tests.
  m.def("_set_tpu_platform_standin", &eager::set_tpu_platform_standin);
  m.def("_tpu_platform_standin", &eager::tpu_platform_standin);
  m.def("_tpu_type_check", &eager::tpu_type_check_enabled);
  // "on" or "off (why)": whether ops may call the host kernels (csrc/host_kernels).
  m.def("_host_kernels_state", []() {
    device::runtime();  // they are registered when the runtime starts
    return device::host_kernels_state();
  });
  m.def("_default_generator", [](int i) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(device::default_generator(static_cast<c10::DeviceIndex>(i))));
  });
  // Whether the buffer behind a tensor's storage is complete (tests of synchronize).
  m.def("_is_ready", [](const at::Tensor& t) {
    auto& slot = device::slot_of(*t.unsafeGetTensorImpl());
    const auto& buffer = slot.buffer();
    return !buffer || buffer->ready_event().is_ready();
  });
  m.attr("PJRT_MIN_API_MINOR") = pjrt::Api::kMinApiMinor;
  python::bind_graph(m);
  python::bind_distributed(m);
  python::bind_module_call(m);
}
