// A claim on compiling one cache key, shared by every process using the
// folder: the first process to miss a key compiles it, and the others that
// miss it meanwhile wait for its entry instead of compiling the same program
// too. Ranks of one job on one host (torchrun, 4 processes on a TPU host)
// miss the same programs at the same moment; without the claim each of them
// pays every compile.
//
// The claim is an flock(2) on `<entry>.lock` in the folder: the kernel drops
// it when its holder exits or dies, so a crashed compiler never strands the
// others. The holder deletes the lock file when done; a waiter that then
// holds the (deleted) file's lock checks the folder again, and compiles
// itself when the holder wrote nothing (a failed compile).
//
// A waiter gives up after TORCH_TPU_COMPILE_WAIT_S seconds (default 300; 0:
// never wait) and compiles on its own, with one warning line: a holder that
// is stopped (a debugger, SIGSTOP) must not stop the others for good.
#pragma once

#include <string>

namespace torch_tpu::compile_cache {

class CompileClaim {
 public:
  // Takes the claim on `lock_path`, waiting while another process holds it.
  explicit CompileClaim(const std::string& lock_path);
  ~CompileClaim();
  CompileClaim(const CompileClaim&) = delete;
  CompileClaim& operator=(const CompileClaim&) = delete;

  // Another process held the claim when this one asked: it may have written
  // the entry meanwhile, so look again before compiling.
  bool waited() const { return waited_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool locked_ = false;
  bool waited_ = false;
};

}  // namespace torch_tpu::compile_cache
