// What torch.profiler (Kineto) shows as `tpu` device activity: each program
// run while a trace records, timed on the host from when the device could
// start it (queued, and the device's earlier work finished) to its completion
// callback (PJRT_Event_OnReady). PJRT gives no device clocks, so a span is
// exact to the callbacks' delivery (microseconds), as DeviceEvent's times are.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pjrt/event.h"

namespace torch_tpu::device::profiler {

struct ProgramSpan {
  std::string name;       // the op (or graph) the program runs
  int device = 0;
  int64_t queued_ns = 0;  // Unix-epoch nanoseconds, Kineto's time base
  int64_t done_ns = 0;
  uint64_t correlation = 0;  // the profiler's id of the op that queued it (0: none)
};

// Off unless a trace records: then runtime.cpp's completion tracking reports
// each program here. The check is one relaxed atomic load.
bool recording();
void start_recording();
// Ends the recording and returns its spans in queue order, after waiting for
// the completion of every program it saw (they always complete, failed or not).
std::vector<ProgramSpan> stop_recording();
// `queued_ns`: when the program was handed to PJRT (0: now).
void record_program(const std::string& name, int device, const std::shared_ptr<pjrt::Event>& done,
                    int64_t queued_ns);

// The profiler's correlation ids of the ops running on this thread (a stack:
// ops nest), so a program links to the op that queued it.
void push_correlation(uint64_t id);
void pop_correlation();

int64_t now_ns();

}  // namespace torch_tpu::device::profiler
