#include "compile_cache/compile_claim.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace torch_tpu::compile_cache {

namespace {

// Seconds a waiter waits for another process's compile (TORCH_TPU_COMPILE_WAIT_S).
double compile_wait_limit_seconds() {
  static const double limit = [] {
    constexpr double kDefault = 300;
    const char* v = std::getenv("TORCH_TPU_COMPILE_WAIT_S");
    if (!v || !*v) return kDefault;
    char* end = nullptr;
    double s = std::strtod(v, &end);
    if (end && *end == '\0' && s >= 0) return s;
    std::fprintf(stderr,
                 "torch_tpu: compile cache: TORCH_TPU_COMPILE_WAIT_S='%s' is not "
                 "a number of seconds; using %g\n", v, kDefault);
    return kDefault;
  }();
  return limit;
}

}  // namespace

CompileClaim::CompileClaim(const std::string& lock_path) : path_(lock_path) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(compile_wait_limit_seconds()));
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;  // an unusable folder already warned elsewhere: compile unclaimed
    for (;;) {
      if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
        locked_ = true;
        break;
      }
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK || Clock::now() >= deadline) {
        if (errno == EWOULDBLOCK) {
          std::fprintf(stderr,
                       "torch_tpu: compile cache: another process has been compiling "
                       "this program for %.0f s (lock %s); compiling it here too\n",
                       std::chrono::duration<double>(Clock::now() - start).count(),
                       path_.c_str());
          std::fflush(stderr);
        }
        ::close(fd_);
        fd_ = -1;
        return;
      }
      waited_ = true;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
    // Ours, unless its previous holder finished and deleted the file between
    // our open and our lock: then the claim belongs to whoever made the new one.
    struct stat mine, current;
    if (::fstat(fd_, &mine) == 0 && ::stat(path_.c_str(), &current) == 0 &&
        mine.st_ino == current.st_ino && mine.st_dev == current.st_dev) {
      return;
    }
    waited_ = true;
    ::close(fd_);
    fd_ = -1;
    locked_ = false;
  }
}

CompileClaim::~CompileClaim() {
  if (fd_ < 0) return;
  // Delete before unlocking: a process that opens the path afterwards makes a
  // fresh file, and one blocked on this file sees it is no longer at the path.
  if (locked_) ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace torch_tpu::compile_cache
