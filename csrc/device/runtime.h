// The process-wide PJRT runtime: the plugin and client (created on first use,
// so `import torch` stays fast), the current device, asynchronous work
// tracking, and whole-buffer transfers between host and device.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "hlo/tensor_type.h"
#include "pjrt/api.h"
#include "pjrt/buffer.h"
#include "pjrt/client.h"
#include "pjrt/device.h"
#include "pjrt/element_type.h"
#include "pjrt/event.h"

namespace torch_tpu::device {

struct StorageSlot;

struct Runtime {
  std::string plugin_path;
  std::shared_ptr<pjrt::Api> api;
  std::shared_ptr<pjrt::Client> client;
  std::vector<pjrt::Device> devices;
};

// Where plugin discovery looks (Python's sys.path), set at import time.
void set_plugin_search_dirs(std::vector<std::string> dirs);
// Initializes on first call; throws c10::Error with the plugin's message (the
// same one on every later call) when no plugin can be loaded.
Runtime& runtime();
bool runtime_initialized();
// The plugin the runtime runs on (or, before it starts, the one it would
// load), without starting it: for tools that load the same plugin beside us.
std::string plugin_path();
// True in a child forked after the runtime started in the parent; runtime() then raises.
bool in_bad_fork();
int device_count();  // 0 when the runtime cannot start; never throws
const pjrt::Device& pjrt_device(int index);

int current_device();
void set_current_device(int index);

// Execution modes: strict (asynchronous, the default), debug (wait after
// every program and check its errors) and fused (ops are deferred into a
// bounded window compiled as one program: eager/fused_window.h).
// TORCH_TPU_EAGER_MODE selects at start; a change flushes the window.
enum class EagerMode { Strict = 0, Debug = 1, Fused = 2 };
EagerMode eager_mode();
void set_eager_mode(EagerMode m);
bool debug_mode();
void set_debug_mode(bool on);

// Records a program's completion event; synchronize() waits for all of them
// and raises the first error, naming the op that failed. `queued_ns` is when
// the program was handed to PJRT (profiler::now_ns(), taken only while the
// profiler records; 0: now): a plugin may run a small program inside Execute.
void track_completion(pjrt::Event done, const std::string& op, int device_index, int64_t queued_ns = 0);
void synchronize(int device_index = -1);

// Drops a buffer once every program queued so far has finished. A program
// queued before a buffer's last reference goes away may not have read it yet,
// and the CPU plugin was seen to hand a destroyed buffer's memory to a later
// result while such a program was still to read it (wrong values, no error):
// so storages, and executions' temporary operands, let go of buffers here.
void retire_after_queued_work(std::shared_ptr<pjrt::Buffer> buffer);
// Completion events of the work queued on the device and not yet known done.
std::vector<std::shared_ptr<pjrt::Event>> queued_work(int device_index);

// A value-dependent check of a queued program (see ops/runtime_check.h): a
// 0-d bool buffer that is true when the check failed. Raised (IndexError,
// ValueError or RuntimeError by `kind`: 0, 1, 2) at the next synchronization
// or host read, or at once in debug mode. Kind 3: an i32 LAPACK info buffer,
// failed where any entry is nonzero (set_info_check_raiser).
void track_check(std::shared_ptr<pjrt::Buffer> failed, int kind, const std::string& message, const std::string& op,
                 int device_index);
// Evaluates the pending checks; raises the first that failed.
void raise_failed_checks();
// Raises the CPU kernel's error for a failed LAPACK info check (kind 3): the
// info values (i32, row-major `dims`) and the API name. Provided by the eager
// layer, which can call ATen's _linalg_check_errors.
using InfoCheckRaiser = void (*)(const int32_t* info, const std::vector<int64_t>& dims, const std::string& api_name);
void set_info_check_raiser(InfoCheckRaiser raiser);

pjrt::ElementType to_pjrt(hlo::DType t);
std::shared_ptr<pjrt::Buffer> upload(const void* data, const hlo::TensorType& type, int device_index);
// The slot's whole buffer into `dst` (layout.numel() elements); zeros if never written.
void download(StorageSlot& slot, void* dst, size_t nbytes);
std::shared_ptr<pjrt::Buffer> zeros_buffer(const hlo::TensorType& type, int device_index);

// Device-side copy of the first `count` bytes from one storage into another
// (storage resizes). Provided by the eager layer, which can build programs.
using CopyStorageBytesFn = void (*)(StorageSlot& dst, StorageSlot& src, size_t count);
void set_copy_storage_bytes(CopyStorageBytesFn fn);
void copy_storage_bytes(StorageSlot& dst, StorageSlot& src, size_t count);

}  // namespace torch_tpu::device
