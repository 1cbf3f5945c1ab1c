#include "device/profiler/program_spans.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace torch_tpu::device::profiler {
namespace {

// One recording; completion callbacks hold it, so a late callback of an ended
// recording writes into that recording's spans, never into the next one's.
struct Recording {
  std::mutex mutex;
  std::condition_variable all_done;
  std::vector<std::shared_ptr<ProgramSpan>> spans;
  size_t outstanding = 0;
};

std::atomic<bool> active{false};
std::mutex current_mutex;
std::shared_ptr<Recording> current;
thread_local std::vector<uint64_t> correlation_stack;

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool recording() { return active.load(std::memory_order_relaxed); }

void start_recording() {
  std::lock_guard<std::mutex> lock(current_mutex);
  current = std::make_shared<Recording>();
  active.store(true);
}

std::vector<ProgramSpan> stop_recording() {
  std::shared_ptr<Recording> rec;
  {
    std::lock_guard<std::mutex> lock(current_mutex);
    active.store(false);
    rec.swap(current);
  }
  if (!rec) return {};
  std::unique_lock<std::mutex> lock(rec->mutex);
  rec->all_done.wait(lock, [&] { return rec->outstanding == 0; });
  std::vector<ProgramSpan> out;
  out.reserve(rec->spans.size());
  for (const auto& s : rec->spans) out.push_back(*s);
  return out;
}

void record_program(const std::string& name, int device, const std::shared_ptr<pjrt::Event>& done,
                    int64_t queued_ns) {
  std::shared_ptr<Recording> rec;
  {
    std::lock_guard<std::mutex> lock(current_mutex);
    rec = current;
  }
  if (!rec) return;
  auto span = std::make_shared<ProgramSpan>();
  span->name = name;
  span->device = device;
  span->queued_ns = queued_ns ? queued_ns : now_ns();
  span->correlation = correlation_stack.empty() ? 0 : correlation_stack.back();
  {
    std::lock_guard<std::mutex> lock(rec->mutex);
    rec->spans.push_back(span);
    ++rec->outstanding;
  }
  auto finish = [rec, span] {
    std::lock_guard<std::mutex> lock(rec->mutex);
    span->done_ns = now_ns();
    if (--rec->outstanding == 0) rec->all_done.notify_all();
  };
  try {
    done->on_ready(finish);
  } catch (...) {
    finish();  // no callback: the span ends now rather than holding stop_recording()
  }
}

void push_correlation(uint64_t id) { correlation_stack.push_back(id); }
void pop_correlation() {
  if (!correlation_stack.empty()) correlation_stack.pop_back();
}

}  // namespace torch_tpu::device::profiler
