#include "eager/buffer_trace.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace torch_tpu::eager {

bool buffer_trace_on() {
  static const bool on = [] {
    const char* v = std::getenv("TORCH_TPU_TRACE_BUFFERS");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

std::vector<const void*> traced_addresses(const std::vector<pjrt::Buffer*>& args) {
  std::vector<const void*> out;
  if (!buffer_trace_on()) return out;
  out.reserve(args.size());
  for (const pjrt::Buffer* b : args) out.push_back(b ? b->device_address() : nullptr);
  return out;
}

namespace {
void append(std::string& line, const void* p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  line += text;
}
}  // namespace

void trace_run(const std::string& what, const std::vector<const void*>& args,
               const std::vector<std::shared_ptr<pjrt::Buffer>>& results) {
  if (!buffer_trace_on()) return;
  std::string line = "torch_tpu trace: " + what + " args [";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) line += ", ";
    append(line, args[i]);
  }
  line += "] -> results [";
  for (size_t i = 0; i < results.size(); ++i) {
    if (i) line += ", ";
    append(line, results[i] ? results[i]->device_address() : nullptr);
  }
  line += "]\n";
  static std::mutex mu;  // threads' lines stay whole
  std::lock_guard<std::mutex> lock(mu);
  std::fputs(line.c_str(), stderr);
}

}  // namespace torch_tpu::eager
