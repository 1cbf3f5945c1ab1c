#include "compile_cache/program_dump.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace torch_tpu::compile_cache {
namespace {

std::mutex mu;
std::string dir = [] {
  const char* v = std::getenv("TORCH_TPU_DUMP_PROGRAMS");
  return std::string(v ? v : "");
}();
long counter = 0;

}  // namespace

void set_program_dump_dir(const std::string& d) {
  std::lock_guard<std::mutex> lock(mu);
  dir = d;
}

void dump_program(const std::string& program) {
  std::lock_guard<std::mutex> lock(mu);
  if (dir.empty()) return;
  std::error_code ignored;
  std::filesystem::create_directories(dir, ignored);  // a failure shows as a missing file, nothing else
  std::string path = dir + "/" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".mlir";
  std::ofstream(path) << program;  // a failed write loses a debug file, nothing else
}

}  // namespace torch_tpu::compile_cache
