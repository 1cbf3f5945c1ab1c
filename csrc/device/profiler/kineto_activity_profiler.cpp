// torch.profiler's device activity for `tpu`: a Kineto child profiler
// (PyTorch's PrivateUse1 profiler registry) that turns the programs run while
// a trace records (program_spans.h) into CONCURRENT_KERNEL activities on the
// device's row, linked to the op that queued them. PyTorch then reports them
// as PrivateUse1 device events (device_time of the ops, the Chrome trace).
#include <algorithm>
#include <map>
#include <set>

#include <libkineto.h>
#include <output_base.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include "device/profiler/program_spans.h"

namespace torch_tpu::device::profiler {
namespace {

using libkineto::ActivityType;

class TpuProfilerSession final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    start_ns_ = now_ns();
    start_recording();
    status_ = libkineto::TraceStatus::RECORDING;
  }
  void stop() override {
    spans_ = stop_recording();
    end_ns_ = now_ns();
    status_ = libkineto::TraceStatus::PROCESSING;
  }
  std::vector<std::string> errors() override { return {}; }

  void processTrace(libkineto::ActivityLogger& logger) override { emit(logger, nullptr); }
  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked, int64_t,
                    int64_t) override {
    emit(logger, linked);
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    return std::make_unique<libkineto::DeviceInfo>(libkineto::DeviceInfo{0, 0, "tpu", "tpu"});
  }
  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> out;
    for (int d : devices_) out.push_back(libkineto::ResourceInfo{0, 0, d, "tpu:" + std::to_string(d) + " stream"});
    return out;
  }
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return std::move(buffer_); }

  void pushCorrelationId(uint64_t id) override { push_correlation(id); }
  void popCorrelationId() override { pop_correlation(); }

 private:
  void emit(libkineto::ActivityLogger& logger, const libkineto::getLinkedActivityCallback& linked) {
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(start_ns_, end_ns_, "tpu");
    buffer_->gpuOpCount = static_cast<int>(spans_.size());
    // One queue per device: a program starts when it was queued or when the
    // device's previous program finished, whichever is later.
    std::map<int, int64_t> device_free_at;
    for (const ProgramSpan& s : spans_) {
      buffer_->emplace_activity(buffer_->span, ActivityType::CONCURRENT_KERNEL, s.name);
      libkineto::GenericTraceActivity& a = *buffer_->activities.back();
      int64_t& free_at = device_free_at[s.device];
      a.startTime = std::max(s.queued_ns, free_at);
      a.endTime = std::max(s.done_ns, a.startTime);
      free_at = a.endTime;
      a.device = s.device;
      a.resource = 0;
      a.id = static_cast<int32_t>(s.correlation);
      if (linked && s.correlation) a.linked = linked(static_cast<int32_t>(s.correlation));
      a.addMetadataQuoted("device", "tpu:" + std::to_string(s.device));
      devices_.insert(s.device);
      logger.handleGenericActivity(a);
    }
  }

  int64_t start_ns_ = 0, end_ns_ = 0;
  std::vector<ProgramSpan> spans_;
  std::set<int> devices_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
};

class TpuActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<ActivityType>& availableActivities() const override { return activities_; }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<ActivityType>& types,
                                                                 const libkineto::Config&) override {
    // CPU-only traces also list PRIVATEUSE1_RUNTIME; device work is asked for
    // with ProfilerActivity.PrivateUse1, which adds CONCURRENT_KERNEL.
    if (!types.count(ActivityType::CONCURRENT_KERNEL)) return nullptr;
    return std::make_unique<TpuProfilerSession>();
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t,
                                                                 const std::set<ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_ = "tpu";
  std::set<ActivityType> activities_{ActivityType::CONCURRENT_KERNEL};
};

REGISTER_PRIVATEUSE1_PROFILER(TpuActivityProfiler);

}  // namespace
}  // namespace torch_tpu::device::profiler
