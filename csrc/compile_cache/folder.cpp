#include "compile_cache/folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "compile_cache/entry.h"

namespace torch_tpu::compile_cache {

namespace {

constexpr char kSuffix[] = ".xla";
constexpr char kTempSuffix[] = ".tmp";
constexpr char kLockSuffix[] = ".lock";
constexpr time_t kStaleTempSeconds = 3600;

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

bool ends_with(const std::string& s, const char* tail) {
  size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// mkdir -p.
bool make_dirs(const std::string& dir) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool read_file(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0;
  if (ok) {
    out->resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (ok && done < out->size()) {
      ssize_t n = ::read(fd, &(*out)[done], out->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // shorter than stat said: the checks reject it
      done += static_cast<size_t>(n);
    }
    out->resize(done);
  }
  ::close(fd);
  return ok;
}

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Folder::Folder(std::string dir, uint64_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

std::string Folder::path_of(const Digest& key) const {
  return dir_ + "/" + hex(key) + kSuffix;
}

std::string Folder::lock_path_of(const Digest& key) const {
  return path_of(key) + kLockSuffix;
}

std::string Folder::open() {
  if (!make_dirs(dir_)) return errno_text("cannot create " + dir_);
  if (::access(dir_.c_str(), R_OK | W_OK | X_OK) != 0) {
    return errno_text("cannot write " + dir_);
  }
  return "";
}

Folder::Load Folder::load(const Digest& key, std::string* payload,
                          std::string* problem) {
  const std::string path = path_of(key);
  std::string bytes;
  if (!read_file(path, &bytes)) return Load::kMiss;
  std::string why = decode_entry(std::move(bytes), key, payload);
  if (!why.empty()) {
    // Never trusted again: the caller rebuilds and rewrites it.
    ::unlink(path.c_str());
    *problem = why;
    return Load::kBad;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // now: recently used
  return Load::kHit;
}

std::string Folder::store(const Digest& key, const std::string& payload) {
  static std::atomic<uint64_t> counter{0};
  const std::string bytes = encode_entry(key, payload);
  const std::string path = path_of(key);
  // Unique per process and call, so concurrent writers never share a temp.
  const std::string temp = dir_ + "/." + hex(key) + "." +
                           std::to_string(::getpid()) + "." +
                           std::to_string(counter++) + kTempSuffix;
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno_text("cannot create " + temp);
  bool ok = write_all(fd, bytes) && ::fsync(fd) == 0;
  std::string why = ok ? "" : errno_text("cannot write " + temp);
  if (::close(fd) != 0 && ok) why = errno_text("cannot close " + temp);
  if (why.empty() && ::rename(temp.c_str(), path.c_str()) != 0) {
    why = errno_text("cannot rename " + temp + " to " + path);
  }
  if (!why.empty()) {
    ::unlink(temp.c_str());
    return why;
  }
  bool over;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (estimate_ >= 0) estimate_ += static_cast<int64_t>(bytes.size());
    over = max_bytes_ > 0 &&
           (estimate_ < 0 || estimate_ > static_cast<int64_t>(max_bytes_));
  }
  if (over) evict();
  return "";
}

void Folder::remove(const Digest& key) { ::unlink(path_of(key).c_str()); }

int64_t Folder::evict() {
  struct File {
    std::string path;
    int64_t size;
    struct timespec mtime;
  };
  std::vector<File> files;
  int64_t total = 0;
  const time_t now = ::time(nullptr);
  if (DIR* d = ::opendir(dir_.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      const bool entry = ends_with(name, kSuffix) && name[0] != '.';
      // A lock file outlives a claim only when its holder died; it is empty.
      const bool temp = (name[0] == '.' && ends_with(name, kTempSuffix)) ||
                        ends_with(name, kLockSuffix);
      if (!entry && !temp) continue;
      const std::string path = dir_ + "/" + name;
      struct stat st;
      if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (temp) {
        // A writer or compiler that died; a live one finishes well within this.
        if (now - st.st_mtime > kStaleTempSeconds) ::unlink(path.c_str());
        continue;
      }
      files.push_back({path, static_cast<int64_t>(st.st_size), st.st_mtim});
      total += st.st_size;
    }
    ::closedir(d);
  }
  int64_t removed = 0;
  const int64_t low_water = static_cast<int64_t>(max_bytes_ / 10 * 9);
  if (max_bytes_ > 0 && total > static_cast<int64_t>(max_bytes_)) {
    std::sort(files.begin(), files.end(), [](const File& a, const File& b) {
      if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
      return a.mtime.tv_nsec < b.mtime.tv_nsec;
    });
    for (const File& f : files) {
      if (total <= low_water) break;
      if (::unlink(f.path.c_str()) == 0) ++removed;
      total -= f.size;  // gone either way: another process may have evicted it
    }
  }
  evicted_ += removed;
  std::lock_guard<std::mutex> lock(mu_);
  estimate_ = total;
  return removed;
}

}  // namespace torch_tpu::compile_cache
