#include "eager/fused/window.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cstdlib>
#include <mutex>

#include "device/device_error.h"
#include "device/profiler/program_spans.h"
#include "device/runtime.h"
#include "eager/buffer_trace.h"
#include "eager/fused/window_state.h"
#include "eager/metrics.h"
#include "eager/program_cache.h"
#include "eager/scalar_operand_cache.h"
#include "pjrt/error.h"

namespace torch_tpu::eager::fused {

using device::StorageSlot;

namespace {

std::recursive_mutex mu;                  // recursive: a flush can start inside a record
Window* current = new Window();           // leaked: storages may die after static destruction
std::atomic<bool> pending{false};
std::atomic<int64_t> n_windows{0}, n_ops{0}, n_compiles{0};

size_t window_limit() {
  static const size_t limit = [] {
    const char* v = std::getenv("TORCH_TPU_FUSED_WINDOW_OPS");
    long long n = v ? std::atoll(v) : 0;
    return n > 0 ? static_cast<size_t>(n) : size_t{512};
  }();
  return limit;
}

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Where a window ends. A loop without host reads (a decode with the token
// kept on the device, training steps that read the loss now and then) is one
// endless stream of ops; cutting it only at the size limit would start each
// window at a new place in the loop's period, so every window would be new
// and compile (a recompile storm). Cuts therefore depend on the ops
// themselves (content-defined, as in rsync's chunking): past a quarter of the
// limit, a window ends before an op that starts its own sequence again (its
// first op's plan) or whose hash with the three ops before it hits 1 in 16.
// The cut after a cut is then a function of where the last one was, so a
// periodic stream settles into a repeating set of windows that compile once.
bool ends_before(const Window& w, uint64_t plan_id) {
  size_t n = w.ops.size();
  if (n == 0) return false;
  if (n >= window_limit()) return true;
  if (n < std::max<size_t>(window_limit() / 4, 4)) return false;
  if (w.ops.front().plan->id == plan_id) return true;
  uint64_t h = mix(plan_id);
  for (size_t k = 1; k <= 3; ++k) h = mix(h ^ w.ops[n - k].plan->id);
  return (h & 15) == 0;
}

ProgramCache<pjrt::Executable>& programs() {
  static auto* c = new ProgramCache<pjrt::Executable>();
  return *c;
}

int storage_of(Window& w, StorageSlot* slot) {
  // The slot carries its number in the window (no map to look it up in):
  // in_fused_window is set here and cleared when the window is flushed.
  if (slot->in_fused_window) return slot->fused_storage;
  int id = static_cast<int>(w.storages.size());
  w.storages.push_back(WindowStorage{slot, slot->layout});
  slot->in_fused_window = true;
  slot->fused_storage = id;
  return id;
}

// Named in errors of the window's program: its ops, in order.
std::string window_name(const Window& w) {
  std::string name = "a fused window of " + std::to_string(w.ops.size()) + " ops (";
  for (size_t i = 0; i < w.ops.size() && i < 8; ++i) name += (i ? ", " : "") + w.ops[i].op;
  return name + (w.ops.size() > 8 ? ", ...)" : ")");
}

void run(Window& w) {
  std::vector<int> out = w.outputs();
  std::string name = window_name(w);
  std::string key = window_key(w);
  std::shared_ptr<pjrt::Executable> exe = programs().find(key);
  if (!exe) {
    exe = compile_program(window_program(w), "fused window", name);
    count_evictions(programs().insert(key, exe));
    ++n_compiles;
  }
  std::vector<std::shared_ptr<pjrt::Buffer>> keep;  // alive until the program is queued
  std::vector<pjrt::Buffer*> args;
  std::vector<int64_t> non_donatable;
  for (WindowStorage& s : w.storages) {
    if (!s.read_before_written) continue;
    std::shared_ptr<pjrt::Buffer> buffer = s.slot ? s.slot->raw_buffer() : std::move(s.orphan);
    if (!buffer) {
      buffer = device::zeros_buffer(s.layout, w.device_index);
      if (s.slot && !s.written) s.slot->raw_buffer() = buffer;
    }
    // Donate only a buffer nothing else holds (the slot's own reference aside).
    bool donated = s.slot && s.written;
    if (donated && buffer.use_count() > 2) non_donatable.push_back(static_cast<int64_t>(args.size()));
    if (donated) s.slot->raw_buffer().reset();  // the program owns it now; the slot gets the result
    args.push_back(buffer.get());
    keep.push_back(std::move(buffer));
  }
  OperandLayout layout = operand_layout(w);
  if (layout.packed) {
    std::vector<std::string> packs(layout.pack_dtypes.size());  // the bytes are also the cache key
    for (size_t p = 0; p < packs.size(); ++p)
      packs[p].resize(layout.pack_sizes[p] * hlo::dtype_bytes(layout.pack_dtypes[p]));
    for (size_t i = 0; i < w.ops.size(); ++i)
      for (size_t k = 0; k < w.ops[i].operands.size(); ++k) {
        auto [p, index] = layout.place[i][k];
        size_t width = hlo::dtype_bytes(layout.pack_dtypes[p]);
        std::memcpy(packs[p].data() + index * width, w.ops[i].operands[k].value.bytes.data(), width);
      }
    for (size_t p = 0; p < packs.size(); ++p) {
      keep.push_back(cached_array_buffer(std::move(packs[p]), layout.pack_dtypes[p], w.device_index));
      args.push_back(keep.back().get());
    }
  } else {
    for (const RecordedOp& r : w.ops)
      for (const OperandValue& v : r.operands) {
        keep.push_back(operand_buffer(v, w.device_index));
        args.push_back(keep.back().get());
      }
  }
  int64_t queued_ns = device::profiler::recording() ? device::profiler::now_ns() : 0;
  pjrt::ExecuteResult result;
  std::vector<const void*> traced = traced_addresses(args);
  try {
    result = exe->execute(args, device::pjrt_device(w.device_index), non_donatable);
  } catch (const pjrt::Error& e) {
    device::raise_device_failure(e, "running " + name, w.device_index, 0);
  }
  trace_run(name, traced, result.outputs);
  count_execution();
  ++n_windows;
  device::track_completion(std::move(result.done), name, w.device_index, queued_ns);
  for (auto& b : keep) device::retire_after_queued_work(std::move(b));
  for (size_t s = 0; s < w.storages.size(); ++s)
    if (out[s] >= 0) {
      StorageSlot* slot = w.storages[s].slot;
      slot->set(result.outputs.at(out[s]), slot->layout, slot->producer);
    }
  size_t next_check = result.outputs.size();
  for (const RecordedOp& r : w.ops) next_check -= r.plan->checks.size();
  for (const RecordedOp& r : w.ops)
    for (const ops::RuntimeCheck& c : r.plan->checks)
      device::track_check(result.outputs.at(next_check++), static_cast<int>(c.kind), c.message, r.op,
                          w.device_index);
}

void flush_locked() {
  if (current->ops.empty()) return;
  std::unique_ptr<Window> w(current);
  current = new Window();
  // Sized like the last window: a loop's windows repeat.
  current->ops.reserve(w->ops.size());
  current->storages.reserve(w->storages.size());
  pending = false;
  // From here on nothing sees these storages as deferred.
  for (WindowStorage& s : w->storages)
    if (s.slot) {
      s.slot->in_fused_window = false;
      s.slot->fused_storage = -1;
    }
  try {
    run(*w);
  } catch (const std::exception& e) {
    // What the window was to write is unknown now: reads raise, never stale values.
    for (WindowStorage& s : w->storages)
      if (s.slot && s.written) s.slot->failure = std::string("the deferred work that wrote it failed: ") + e.what();
    throw;
  }
}

void release(StorageSlot& slot, std::shared_ptr<pjrt::Buffer> buffer) {
  std::lock_guard<std::recursive_mutex> lock(mu);
  if (!slot.in_fused_window) {  // not in this window (any more)
    if (buffer) device::retire_after_queued_work(std::move(buffer));
    return;
  }
  WindowStorage& s = current->storages[slot.fused_storage];
  s.slot = nullptr;
  s.orphan = std::move(buffer);
  slot.in_fused_window = false;
  slot.fused_storage = -1;
}

}  // namespace

void flush() {
  if (!pending) return;
  std::lock_guard<std::recursive_mutex> lock(mu);
  flush_locked();
}

std::vector<at::Tensor> record(const Invocation& inv, std::shared_ptr<const OpPlan> plan,
                               const std::vector<TensorFacts>& facts, const std::vector<StorageSlot*>& groups) {
  std::lock_guard<std::recursive_mutex> lock(mu);
  if (current->device_index != inv.device_index || ends_before(*current, plan->id)) flush_locked();
  Window& w = *current;
  w.device_index = inv.device_index;
  RecordedOp r;
  r.op = inv.op;
  r.bases.reserve(plan->base_groups.size());
  r.targets.reserve(inv.targets.size());
  r.fresh.reserve(plan->fresh.size());
  for (int g : plan->base_groups) {
    groups[g]->check_not_failed();
    int s = storage_of(w, groups[g]);
    if (!w.storages[s].written) w.storages[s].read_before_written = true;
    r.bases.push_back(s);
  }
  r.operands = runtime_operands(*plan, inv, facts);
  size_t n_in = inv.inputs.size();
  for (size_t t = 0; t < inv.targets.size(); ++t) {
    StorageSlot* slot = facts[n_in + t].slot;
    int s = storage_of(w, slot);
    w.storages[s].written = true;
    slot->layout = plan->target_layouts[t];  // its layout once the window has run
    slot->producer = inv.op;
    r.targets.push_back(s);
  }
  std::vector<at::Tensor> fresh;
  fresh.reserve(plan->fresh.size());
  for (size_t k = 0; k < plan->fresh.size(); ++k) {
    const FreshOutput& fo = plan->fresh[k];
    if (!fo.defined) {
      fresh.emplace_back();
      r.fresh.push_back(-1);
      continue;
    }
    at::Tensor t = new_tpu_tensor(fo.dtype, fo.sizes, fo.strides, inv.device_index);
    StorageSlot& slot = device::slot_of(*t.unsafeGetTensorImpl());
    slot.layout = plan->fresh_layouts[k];
    slot.producer = inv.op;
    int s = storage_of(w, &slot);
    w.storages[s].written = true;
    r.fresh.push_back(s);
    fresh.push_back(std::move(t));
  }
  r.plan = std::move(plan);
  w.ops.push_back(std::move(r));
  ++n_ops;
  pending = true;
  return fresh;
}

namespace {
struct InstallHooks {
  InstallHooks() { device::set_fused_window_hooks(&flush, &release); }
} install_hooks;
}  // namespace

Counters counters() { return Counters{n_windows.load(), n_ops.load(), n_compiles.load()}; }

void reset_counters() {
  n_windows = 0;
  n_ops = 0;
  n_compiles = 0;
}

}  // namespace torch_tpu::eager::fused
