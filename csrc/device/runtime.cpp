#include "device/runtime.h"

#include <c10/util/Exception.h>

#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

#include "device/device_error.h"
#include "device/host_kernel_setup.h"
#include "device/plugin_workarounds.h"
#include "device/profiler/program_spans.h"
#include "device/storage_slot.h"
#include "pjrt/error.h"
#include "pjrt/plugin_locator.h"

namespace torch_tpu::device {

namespace {

std::mutex init_mutex;
std::vector<std::string> search_dirs;
std::unique_ptr<Runtime> the_runtime;
std::string init_error;  // set once when starting fails; repeated on later calls

thread_local int tls_current_device = 0;

EagerMode mode_from_env() {
  const char* m = std::getenv("TORCH_TPU_EAGER_MODE");
  if (!m || !*m) {  // Google TorchTPU's switches
    const char* blocking = std::getenv("TPU_LAUNCH_BLOCKING");
    const char* fuse = std::getenv("TPU_DEFER_AND_FUSE");
    if (blocking && std::strcmp(blocking, "1") == 0) return EagerMode::Debug;
    if (fuse && std::strcmp(fuse, "1") == 0) return EagerMode::Fused;
    return EagerMode::Strict;
  }
  if (std::strcmp(m, "strict") == 0) return EagerMode::Strict;
  if (std::strcmp(m, "debug") == 0) return EagerMode::Debug;
  if (std::strcmp(m, "fused") == 0) return EagerMode::Fused;
  TORCH_WARN("torch_tpu: unknown TORCH_TPU_EAGER_MODE='", m, "' (use strict, debug or fused); using strict");
  return EagerMode::Strict;
}
std::atomic<EagerMode> mode{mode_from_env()};
bool debug = mode == EagerMode::Debug;

struct Pending {
  std::shared_ptr<pjrt::Event> done;  // shared with device events recorded after it
  std::string op;
  int device_index;
  // Buffers dropped after this program was queued: released when it and
  // everything queued before it are done (the queue is popped in order).
  std::vector<std::shared_ptr<pjrt::Buffer>> retired;
};
std::mutex pending_mutex;
std::deque<Pending> pending;

CopyStorageBytesFn copy_bytes_fn = nullptr;

struct PendingCheck {
  std::shared_ptr<pjrt::Buffer> failed;
  int kind;
  std::string message, op;
  int device_index;
  // The flag's (or info's) copy to the host, started when the check is
  // queued: it runs as soon as its program ends, so a synchronize over many
  // checks waits once instead of making one blocking round trip per check.
  // (Declared after the flag: the read, which waits for its copy, goes first.)
  std::shared_ptr<std::vector<uint8_t>> data;
  std::shared_ptr<pjrt::Event> read;
};
std::mutex checks_mutex;
std::vector<PendingCheck> pending_checks;
InfoCheckRaiser info_check_raiser = nullptr;

constexpr int kLinalgInfo = 3;  // ops::CheckKind::LinalgInfo

size_t check_bytes(const PendingCheck& c) {
  return c.kind == kLinalgInfo ? static_cast<size_t>(c.failed->element_count()) * sizeof(int32_t) : 1;
}

[[noreturn]] void raise_check(const PendingCheck& c) {
  if (c.kind == kLinalgInfo) {
    TORCH_CHECK(info_check_raiser, "torch_tpu: no raiser for LAPACK info checks");
    info_check_raiser(reinterpret_cast<const int32_t*>(c.data->data()), c.failed->dims(), c.message);
  }
  std::string msg = c.op + ": " + c.message;
  if (c.kind == 0) TORCH_CHECK_INDEX(false, msg);
  if (c.kind == 1) TORCH_CHECK_VALUE(false, msg);
  TORCH_CHECK(false, msg);
}

bool check_failed(PendingCheck& c) {
  if (c.read) {
    c.read->await();
  } else {
    c.data = std::make_shared<std::vector<uint8_t>>(check_bytes(c));
    c.failed->to_host(c.data->data(), c.data->size());
  }
  for (uint8_t byte : *c.data)
    if (byte != 0) return true;
  return false;
}

// torchrun (and torch.distributed.launch) set LOCAL_RANK and WORLD_SIZE in
// each process it starts: one process per device, as DeviceMesh, FSDP2,
// Transformers and Diffusers assume, so each process's client gets one
// device, its tpu:0.
bool launched_one_process_per_device() {
  return std::getenv("LOCAL_RANK") != nullptr && std::getenv("WORLD_SIZE") != nullptr;
}

std::unique_ptr<Runtime> start_runtime() {
  auto rt = std::make_unique<Runtime>();
  rt->plugin_path = pjrt::locate_plugin(search_dirs);
  rt->api = pjrt::Api::load(rt->plugin_path);
  pjrt::ClientOptions options;
  options.compile_option_overrides = plugin_compile_overrides(rt->plugin_path);
  if (const char* n = std::getenv("TORCH_TPU_NUM_CPU_DEVICES")) {
    options.cpu_device_count = std::atoll(n);
  } else if (launched_one_process_per_device()) {
    options.cpu_device_count = 1;
  }
  rt->client = pjrt::Client::create(rt->api, options);
  register_host_kernels(*rt->api, rt->client->platform_name());
  rt->devices = rt->client->addressable_devices();
  if (rt->devices.empty()) throw std::runtime_error("the PJRT plugin " + rt->plugin_path + " reports no devices");
  return rt;
}

}  // namespace

void set_plugin_search_dirs(std::vector<std::string> dirs) {
  std::lock_guard<std::mutex> lock(init_mutex);
  search_dirs = std::move(dirs);
}

// A forked child shares the parent's PJRT client without its threads: using
// it hangs. The child marks itself (CUDA's rule: no device in a child forked
// after the device started) and leaks the inherited client, whose teardown
// would wait for those threads too.
namespace {
std::atomic<bool> bad_fork{false};

void on_fork_child() {
  if (the_runtime) {
    bad_fork = true;
    (void)the_runtime.release();
  }
}

[[maybe_unused]] const bool fork_handler_installed = [] {
  pthread_atfork(nullptr, nullptr, on_fork_child);
  return true;
}();
}  // namespace

bool in_bad_fork() { return bad_fork; }

Runtime& runtime() {
  TORCH_CHECK(!bad_fork,
              "Cannot re-initialize tpu in a forked subprocess: the parent had started the tpu runtime before "
              "fork(). To use tpu with multiprocessing, use the 'spawn' start method "
              "(torch.multiprocessing.set_start_method('spawn')); DataLoader workers that only touch CPU tensors "
              "are fine.");
  std::lock_guard<std::mutex> lock(init_mutex);
  if (the_runtime) return *the_runtime;
  if (init_error.empty()) {
    try {
      the_runtime = start_runtime();
      return *the_runtime;
    } catch (const std::exception& e) {
      init_error = e.what();
    }
  }
  TORCH_CHECK(false, "torch_tpu: cannot start the tpu device: ", init_error);
}

bool runtime_initialized() {
  std::lock_guard<std::mutex> lock(init_mutex);
  return the_runtime != nullptr;
}

std::string plugin_path() {
  std::lock_guard<std::mutex> lock(init_mutex);
  if (the_runtime) return the_runtime->plugin_path;
  try {
    return pjrt::locate_plugin(search_dirs);
  } catch (const pjrt::Error& e) {
    TORCH_CHECK(false, "torch_tpu: ", e.what());
  }
}

int device_count() {
  try {
    return static_cast<int>(runtime().devices.size());
  } catch (...) {
    return 0;
  }
}

const pjrt::Device& pjrt_device(int index) {
  Runtime& rt = runtime();
  TORCH_CHECK(index >= 0 && index < static_cast<int>(rt.devices.size()), "tpu device index ", index,
              " is out of range: there are ", rt.devices.size(), " tpu devices");
  return rt.devices[index];
}

int current_device() { return tls_current_device; }

void set_current_device(int index) {
  if (index != tls_current_device) pjrt_device(index);  // validates
  tls_current_device = index;
}

bool debug_mode() { return debug; }
void set_debug_mode(bool on) { set_eager_mode(on ? EagerMode::Debug : EagerMode::Strict); }
EagerMode eager_mode() { return mode.load(); }
void set_eager_mode(EagerMode m) {
  if (m != mode.load()) flush_fused_window();  // a mode change flushes (DESIGN.md: fused eager)
  mode = m;
  debug = m == EagerMode::Debug;
}

void track_completion(pjrt::Event done, const std::string& op, int device_index, int64_t queued_ns) {
  auto shared = std::make_shared<pjrt::Event>(std::move(done));
  if (profiler::recording()) profiler::record_program(op, device_index, shared, queued_ns);
  if (debug) {
    try {
      shared->await();
    } catch (const std::exception& e) {
      TORCH_CHECK(false, "torch_tpu: ", op, " failed on tpu:", device_index, ": ", e.what());
    }
    return;
  }
  std::vector<std::shared_ptr<pjrt::Buffer>> released;  // destroyed after the lock is let go
  std::lock_guard<std::mutex> lock(pending_mutex);
  // Drop finished work from the front so the queue stays short.
  while (!pending.empty() && pending.front().done->is_ready()) {
    Pending& p = pending.front();
    try {
      p.done->await();
    } catch (...) {
      break;  // keep it: synchronize() reports it
    }
    for (auto& b : p.retired) released.push_back(std::move(b));
    pending.pop_front();
  }
  pending.push_back(Pending{std::move(shared), op, device_index, {}});
}

void retire_after_queued_work(std::shared_ptr<pjrt::Buffer> buffer) {
  if (buffer.use_count() > 1) return;  // another holder keeps it alive
  std::lock_guard<std::mutex> lock(pending_mutex);
  if (!pending.empty()) pending.back().retired.push_back(std::move(buffer));
}

void track_check(std::shared_ptr<pjrt::Buffer> failed, int kind, const std::string& message, const std::string& op,
                 int device_index) {
  PendingCheck c{std::move(failed), kind, message, op, device_index};
  if (debug) {
    if (check_failed(c)) raise_check(c);
    return;
  }
  try {
    c.data = std::make_shared<std::vector<uint8_t>>(check_bytes(c));
    c.read = std::make_shared<pjrt::Event>(c.failed->to_host_async(c.data->data(), c.data->size()));
  } catch (const std::exception&) {
    // Not started (no read): the synchronize reads it as a blocking copy, and reports that copy's error.
  }
  std::lock_guard<std::mutex> lock(checks_mutex);
  pending_checks.push_back(std::move(c));
}

void set_info_check_raiser(InfoCheckRaiser raiser) { info_check_raiser = raiser; }

void raise_failed_checks() {
  std::vector<PendingCheck> mine;
  {
    std::lock_guard<std::mutex> lock(checks_mutex);
    mine.swap(pending_checks);
  }
  for (PendingCheck& c : mine)
    if (check_failed(c)) raise_check(c);
}

void synchronize(int device_index) {
  flush_fused_window();
  std::deque<Pending> mine;
  {
    std::lock_guard<std::mutex> lock(pending_mutex);
    std::deque<Pending> others;
    for (auto& p : pending) {
      if (device_index < 0 || p.device_index == device_index) mine.push_back(std::move(p));
      else others.push_back(std::move(p));
    }
    // Programs of other devices queued earlier may still read what this
    // device's entries retired: those buffers wait for the rest of the queue.
    if (!others.empty())
      for (auto& p : mine)
        for (auto& b : p.retired) others.back().retired.push_back(std::move(b));
    pending.swap(others);
  }
  std::string first_error;
  for (auto& p : mine) {
    try {
      p.done->await();
    } catch (const std::exception& e) {
      if (first_error.empty())
        first_error = p.op + " failed on tpu:" + std::to_string(p.device_index) + ": " + e.what();
    }
  }
  TORCH_CHECK(first_error.empty(), "torch_tpu: asynchronous error: ", first_error);
  raise_failed_checks();
}

std::vector<std::shared_ptr<pjrt::Event>> queued_work(int device_index) {
  flush_fused_window();  // an event recorded now covers the deferred work too
  std::lock_guard<std::mutex> lock(pending_mutex);
  std::vector<std::shared_ptr<pjrt::Event>> r;
  for (const auto& p : pending)
    if (p.device_index == device_index) r.push_back(p.done);
  return r;
}

pjrt::ElementType to_pjrt(hlo::DType t) {
  using E = pjrt::ElementType;
  switch (t) {
    case hlo::DType::Pred: return E::Pred;
    case hlo::DType::I8: return E::S8;
    case hlo::DType::I16: return E::S16;
    case hlo::DType::I32: return E::S32;
    case hlo::DType::I64: return E::S64;
    case hlo::DType::U8: return E::U8;
    case hlo::DType::U16: return E::U16;
    case hlo::DType::U32: return E::U32;
    case hlo::DType::U64: return E::U64;
    case hlo::DType::F16: return E::F16;
    case hlo::DType::BF16: return E::BF16;
    case hlo::DType::F8E5M2: return E::F8E5M2;
    case hlo::DType::F8E4M3FN: return E::F8E4M3FN;
    case hlo::DType::F32: return E::F32;
    case hlo::DType::F64: return E::F64;
    case hlo::DType::C64: return E::C64;
    case hlo::DType::C128: return E::C128;
  }
  return E::Invalid;
}

std::shared_ptr<pjrt::Buffer> upload(const void* data, const hlo::TensorType& type, int device_index) {
  Runtime& rt = runtime();
  try {
    return pjrt::Buffer::from_host(*rt.client, data, to_pjrt(type.dtype), type.dims, pjrt_device(device_index));
  } catch (const pjrt::Error& e) {
    raise_device_failure(e, "copying " + type.str() + " to tpu:" + std::to_string(device_index), device_index,
                         bytes_of({type}));
  }
}

std::shared_ptr<pjrt::Buffer> zeros_buffer(const hlo::TensorType& type, int device_index) {
  size_t bytes = static_cast<size_t>(type.numel() * hlo::dtype_bytes(type.dtype));
  std::vector<uint8_t> zeros(std::max<size_t>(bytes, 1), 0);
  return upload(zeros.data(), type, device_index);
}

void download(StorageSlot& slot, void* dst, size_t nbytes) {
  const std::shared_ptr<pjrt::Buffer>& buffer = slot.buffer();  // runs deferred work first
  raise_failed_checks();  // a host read is a synchronization point
  if (!buffer) {
    std::memset(dst, 0, nbytes);
    return;
  }
  try {
    buffer->to_host(dst, nbytes);
  } catch (const pjrt::Error& e) {
    TORCH_CHECK(false, "torch_tpu: reading a tpu tensor failed",
                slot.producer.empty() ? "" : " (produced by " + slot.producer + ")", ": ", e.what());
  }
}

void set_copy_storage_bytes(CopyStorageBytesFn fn) { copy_bytes_fn = fn; }

void copy_storage_bytes(StorageSlot& dst, StorageSlot& src, size_t count) {
  TORCH_CHECK(copy_bytes_fn, "torch_tpu: storage copies are not available yet");
  copy_bytes_fn(dst, src, count);
}

}  // namespace torch_tpu::device
